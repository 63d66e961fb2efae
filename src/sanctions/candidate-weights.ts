/**
 * The candidate names of one screening and their weights, in arrays the matcher reuses from one
 * screening to the next (a screening runs synchronously, start to end). Screening a common name
 * credits thousands of listed names; maps and pairs for them were a large part of what the worker
 * allocated per transfer. Names keep the order in which they were first credited, as a map would, so
 * that equal weights rank as before.
 */
export class CandidateWeights {
  /** Each name's weight so far (0: not a candidate yet). */
  private readonly weight: Float64Array;
  /** The current token's credit per name: its highest. */
  private readonly tokenCredit: Float64Array;
  /** Names the current token credited, in order; then the candidates, in order of first credit. */
  private readonly credited: Int32Array;
  private creditedCount = 0;
  private readonly order: Int32Array;
  private orderCount = 0;

  constructor(nameCount: number) {
    this.weight = new Float64Array(nameCount);
    this.tokenCredit = new Float64Array(nameCount);
    this.credited = new Int32Array(nameCount);
    this.order = new Int32Array(nameCount);
  }

  /** Credits every name of `list` with `credit` (> 0) for the current token, which counts its highest credit once per name. */
  creditEach(list: readonly number[], credit: number) {
    for (const id of list) {
      const had = this.tokenCredit[id];
      if (had === 0) this.credited[this.creditedCount++] = id;
      if (had < credit) this.tokenCredit[id] = credit;
    }
  }

  /** Adds the current token's credits to the names' weights; the next token starts from none. */
  addTokenCredits() {
    for (let i = 0; i < this.creditedCount; i++) {
      const id = this.credited[i];
      if (this.weight[id] === 0) this.order[this.orderCount++] = id;
      this.weight[id] += this.tokenCredit[id];
      this.tokenCredit[id] = 0;
    }
    this.creditedCount = 0;
  }

  /** The `k` heaviest candidates, equal weights in order of first credit. */
  takeTop(k: number): number[] {
    const ids = Array.from(this.order.subarray(0, this.orderCount));
    if (ids.length > k) {
      ids.sort((a, b) => this.weight[b] - this.weight[a]);
      ids.length = k;
    }
    return ids;
  }

  /** Forgets the credits of the screening before (finished, or stopped half-way): each screening starts with this. */
  clear() {
    for (let i = 0; i < this.creditedCount; i++) this.tokenCredit[this.credited[i]] = 0;
    for (let i = 0; i < this.orderCount; i++) this.weight[this.order[i]] = 0;
    this.creditedCount = 0;
    this.orderCount = 0;
  }
}
