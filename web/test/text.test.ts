// The core's text readers in the browser (ind.parseFasta, ind.parseTextSamples): the same code as the CLI's `otke`
// inputs, so the same file gives the same records and classes, and a malformed one the CLI's message.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { init } from '../src/index.js';
import { expectInductiveError } from './support/expect.js';
import { promoters } from './support/otke.js';

const ind = await init();
const repo = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const CLI = process.env.INDUCTIVE_CLI ?? repo('build/native-release/bin/inductive');
if (!existsSync(CLI)) throw new Error(`text tests: the native CLI ${CLI} is missing (npm test builds it first)`);
const work = mkdtempSync(join(tmpdir(), 'inductive-text-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The CLI's one `error:` line for inputs it refuses (exit 2). */
function cliError(...args: string[]): string {
  try {
    execFileSync(CLI, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as { status: number; stderr: string };
    expect(err.status).toBe(2);
    return err.stderr.trim().replace(/^error: /, '');
  }
  throw new Error(`the CLI accepted ${args.join(' ')}`);
}

describe('parseFasta', () => {
  it('reads the vendored promoters as the test support reads them, headers and letters in file order', () => {
    const text = readFileSync(repo('data/promoters/ecoli_prom_150.fa'), 'utf8');
    const records = ind.parseFasta(text, 'ecoli_prom_150.fa');
    const expected = promoters('ecoli_prom_150.fa');
    expect(records.sequences).toEqual(expected.map((r) => r.sequence));
    expect(records.names).toHaveLength(150);
    expect(records.names[0]).toMatch(/^ECK/);
  });

  it('joins wrapped lines, drops spaces and comment lines, keeps case', () => {
    expect(ind.parseFasta('>a x\nACgt\n  TT \n;note\n>\nGG\n')).toEqual({
      names: ['a x', ''],
      sequences: ['ACgtTT', 'GG'],
    });
  });

  it("refuses what the CLI refuses, with the CLI's message", () => {
    const bad = 'ACGT\n>a\nAC\n';
    const file = join(work, 'bad.fa');
    writeFileSync(file, bad);
    const e = expectInductiveError(() => ind.parseFasta(bad, file), 'invalid_argument');
    const native = cliError(
      'otke',
      'embed',
      '--model',
      repo('data/models/otke-promoters-ecoli.safetensors'),
      '--fasta',
      file,
      '--out',
      join(work, 'e.npy'),
    );
    expect(native).toContain(e.message);
    expectInductiveError(() => ind.parseFasta('', 'empty.fa'), 'invalid_argument', 'empty.fa');
    expectInductiveError(() => ind.parseFasta(3 as never), 'invalid_argument', 'text must be a string');
  });
});

describe('parseTextSamples', () => {
  it('reads label<TAB>sequence lines with sorted classes, as `otke fit --tsv`', () => {
    const s = ind.parseTextSamples('# comment\nb\tAC GT\na\tTTT\n\nb\tGG\n', {
      format: 'labelled-sequences',
      name: 't.tsv',
    });
    expect(s.samples).toEqual(['ACGT', 'TTT', 'GG']);
    expect(s.classNames).toEqual(['a', 'b']);
    expect(s.labels).toEqual([1, 0, 1]);
    expect(s.names[0]).toBe('t.tsv line 2');
  });

  it('reads GLUE sentences with or without labels, as `otke fit --text` and `otke embed --text`', () => {
    const glue = 'sentence\tlabel\nit is good .\t1\nbad , really\t0\n';
    const s = ind.parseTextSamples(glue, { format: 'glue' });
    expect(s.samples).toEqual(['it is good .', 'bad , really']);
    expect(s.classNames).toEqual(['0', '1']);
    expect(s.labels).toEqual([1, 0]);
    const unlabelled = ind.parseTextSamples('index\tsentence\n0\tfine .\n', { format: 'glue', labelled: false });
    expect(unlabelled.samples).toEqual(['fine .']);
    expect(unlabelled.labels).toEqual([]);
  });

  it("refuses a malformed table with the CLI's message", () => {
    const bad = 'a\tACGT\nno tab here\n';
    const file = join(work, 'bad.tsv');
    writeFileSync(file, bad);
    const e = expectInductiveError(
      () => ind.parseTextSamples(bad, { format: 'labelled-sequences', name: file }),
      'invalid_argument',
      'line 2',
    );
    expect(cliError('otke', 'fit', '--tsv', file, '--out', join(work, 'm.safetensors'))).toContain(e.message);
    expectInductiveError(
      () => ind.parseTextSamples('x', { format: 'csv' as never }),
      'invalid_argument',
      "format must be 'labelled-sequences' or 'glue'",
    );
    expectInductiveError(() => ind.parseTextSamples('x', undefined as never), 'invalid_argument', 'format');
  });
});
