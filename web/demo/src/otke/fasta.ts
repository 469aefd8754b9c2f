// FASTA as the OTKE panel's learning reads it, in the worker: records with an optional `label=<class>` token in
// the header.

/** Records with their labels ('' when the header has none); an Error for text that is not FASTA. */
export function parseLabelledFasta(text: string): { sequences: string[]; labels: string[] } {
  const sequences: string[] = [];
  const labels: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith('>')) {
      sequences.push('');
      labels.push(/(?:^|\s)label=(\S+)/.exec(line.slice(1))?.[1] ?? '');
    } else if (sequences.length > 0) {
      sequences[sequences.length - 1] += line.replace(/\s+/g, '');
    } else if (line.trim() !== '') {
      throw new Error('the text must be FASTA: start with a ">name label=class" header line');
    }
  }
  return { sequences, labels };
}
