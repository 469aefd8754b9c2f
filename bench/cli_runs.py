"""What the benchmark scripts that drive the `inductive` CLI share: reading FASTA, running a command for its JSON."""
import json
import subprocess
import sys


def read_fasta(path):
    """[[header, sequence], ...] of a FASTA file (sequences may span several lines)."""
    records = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                records.append([line[1:], ""])
            elif line:
                records[-1][1] += line
    return records


def run_json(cmd):
    """Runs a CLI command and returns its JSON summary (stdout); exits with its stderr when it fails."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
    return json.loads(done.stdout)
