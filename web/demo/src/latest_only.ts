// Keeps at most one computation in flight and remembers only the newest request while it runs. Dragging the eps
// slider fires dozens of inputs per second; queueing them all would make the page lag further and further behind,
// while dropping the intermediate ones keeps it responsive and always ends on the input the user left.

import { SolverError, toSolverError } from './solver_client';

export type Outcome<Req, Res> =
  { ok: true; request: Req; response: Res } | { ok: false; request: Req; error: SolverError };

export interface LatestOnlyListener<Req, Res> {
  /** A computation has been started or queued; the page is now "computing". */
  onBusy(): void;
  /** A computation finished. `latest` is false when a newer request is already waiting to run. */
  onSettled(outcome: Outcome<Req, Res>, latest: boolean): void;
}

export class LatestOnly<Req, Res> {
  private running = false;
  private queued: Req | null = null;

  constructor(
    private readonly run: (request: Req) => Promise<Res>,
    private readonly listener: LatestOnlyListener<Req, Res>,
  ) {}

  submit(request: Req): void {
    this.listener.onBusy();
    if (this.running) {
      this.queued = request;
      return;
    }
    void this.start(request);
  }

  private async start(request: Req): Promise<void> {
    this.running = true;
    let outcome: Outcome<Req, Res>;
    try {
      outcome = { ok: true, request, response: await this.run(request) };
    } catch (err) {
      outcome = { ok: false, request, error: toSolverError(err) };
    }
    this.running = false;
    const next = this.queued;
    this.queued = null;
    // Start the next one before notifying, so a throwing listener cannot stall the queue.
    if (next !== null) void this.start(next);
    this.listener.onSettled(outcome, next === null);
  }
}
