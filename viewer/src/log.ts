// A session's log as the viewer holds it: pages of events fetched from the
// server on demand (never the whole log), the pages most recently used kept
// in memory, and the turn and step ranges a reader collapsed.

import { events, type Envelope, type EventPage } from "./api";

/** Events per page fetched from the server. */
export const pageSize = 400;

/** How many pages stay in memory. */
const keptPages = 64;

/** A session's log, paged. */
export class Log {
  /** The number of events (the next seq). */
  length: number;
  /** Pages by index; an event stays its line of text until it is first read. */
  private pages = new Map<number, (Envelope | string)[]>();
  private loading = new Map<number, Promise<void>>();
  /** Collapsed ranges [start, end] of hidden seqs, sorted, disjoint. */
  private hidden: { start: number; end: number; head: number }[] = [];
  /** Called when a page arrives or the log grows. */
  onChange: () => void = () => {};

  constructor(
    readonly id: string,
    length: number,
  ) {
    this.length = length;
  }

  /** The event at seq, when its page is loaded. */
  get(seq: number): Envelope | undefined {
    const p = this.pages.get(Math.floor(seq / pageSize));
    const e = p?.[seq % pageSize];
    if (typeof e !== "string") return e;
    const parsed = JSON.parse(e) as Envelope;
    p![seq % pageSize] = parsed;
    return parsed;
  }

  private set(seq: number, e: Envelope | string): void {
    const i = Math.floor(seq / pageSize);
    let p = this.pages.get(i);
    if (!p) {
      p = [];
      this.pages.set(i, p);
    }
    p[seq % pageSize] = e;
    if (seq >= this.length) this.length = seq + 1;
  }

  /** Puts a window of events (the first one is fetched by the view). */
  put(page: EventPage): void {
    page.lines.forEach((line, k) => this.set(page.from + k, line));
  }

  /** Whether every event of page i is loaded. */
  private complete(i: number): boolean {
    const p = this.pages.get(i);
    if (!p) return false;
    const want = Math.min(pageSize, this.length - i * pageSize);
    for (let k = 0; k < want; k++) if (!p[k]) return false;
    return true;
  }

  /** Fetches the pages holding seqs [from, to) that are not loaded. */
  async ensure(from: number, to: number): Promise<void> {
    from = Math.max(0, from);
    to = Math.min(this.length, to);
    const waits: Promise<void>[] = [];
    for (let i = Math.floor(from / pageSize); i * pageSize < to; i++) {
      if (this.complete(i)) {
        this.touch(i);
        continue;
      }
      let w = this.loading.get(i);
      if (!w) {
        w = this.fetchPage(i).finally(() => this.loading.delete(i));
        this.loading.set(i, w);
      }
      waits.push(w);
    }
    await Promise.all(waits);
  }

  private async fetchPage(i: number): Promise<void> {
    const page = await events(this.id, i * pageSize, (i + 1) * pageSize);
    this.put(page);
    this.evict();
    this.onChange();
  }

  private touch(i: number): void {
    const p = this.pages.get(i);
    if (p) {
      this.pages.delete(i);
      this.pages.set(i, p);
    }
  }

  private evict(): void {
    while (this.pages.size > keptPages) {
      const oldest = this.pages.keys().next().value as number;
      this.pages.delete(oldest);
    }
  }

  /** Appends a followed event. */
  append(e: Envelope): void {
    if (e.seq < this.length && this.get(e.seq)) return;
    this.set(e.seq, e);
    this.onChange();
  }

  /** The number of rows the timeline shows (the log minus collapsed events). */
  rows(): number {
    let n = this.length;
    for (const h of this.hidden) n -= h.end - h.start + 1;
    return n;
  }

  /** The seq of row r. */
  seqOf(r: number): number {
    let s = r;
    for (const h of this.hidden) {
      if (h.start <= s) s += h.end - h.start + 1;
      else break;
    }
    return s;
  }

  /** The row of seq s (the collapsed group's head when s is hidden). */
  rowOf(s: number): number {
    let r = s;
    for (const h of this.hidden) {
      if (h.end < s) r -= h.end - h.start + 1;
      else if (h.start <= s) return this.rowOf(h.head);
    }
    return r;
  }

  /** Whether the group starting at head is collapsed. */
  collapsed(head: number): boolean {
    return this.hidden.some((h) => h.head === head);
  }

  /** How many events the collapsed group starting at head hides (0 when it is expanded). */
  hiddenBy(head: number): number {
    const h = this.hidden.find((x) => x.head === head);
    return h ? h.end - h.start + 1 : 0;
  }

  /**
   * Collapses or expands the turn or step whose start event is at head:
   * the events after it up to its end event stay hidden.
   */
  async toggle(head: number): Promise<void> {
    const i = this.hidden.findIndex((h) => h.head === head);
    if (i >= 0) {
      this.hidden.splice(i, 1);
      this.onChange();
      return;
    }
    const start = this.get(head);
    if (!start || (start.type !== "turn/start" && start.type !== "step/start")) return;
    const endType = start.type === "turn/start" ? "turn/end" : "step/end";
    let end = -1;
    for (let s = head + 1; s < this.length && end < 0; s++) {
      let e = this.get(s);
      if (!e) {
        await this.ensure(s, s + pageSize);
        e = this.get(s);
        if (!e) break;
      }
      if (e.type === endType && e.data?.turn === start.data?.turn && (endType === "turn/end" || e.data?.step === start.data?.step)) end = s;
      // A new turn ends an unclosed step or turn.
      if (end < 0 && e.type === start.type && s > head) end = s - 1;
    }
    if (end < 0) end = this.length - 1;
    if (end <= head) return;
    // A group inside this one is replaced by it.
    this.hidden = this.hidden.filter((h) => h.start > end || h.end < head + 1);
    this.hidden.push({ start: head + 1, end, head });
    this.hidden.sort((a, b) => a.start - b.start);
    this.onChange();
  }

  /**
   * The nesting depth of the event at seq: 0 for turn boundaries, 1 for
   * step boundaries and events of a turn outside a step, 2 inside a step.
   */
  depth(seq: number): number {
    const e = this.get(seq);
    if (!e) return 0;
    if (e.type === "turn/start" || e.type === "turn/end") return 0;
    if (e.type === "step/start" || e.type === "step/end") return 1;
    for (let s = seq - 1; s >= 0 && s > seq - 64; s--) {
      const p = this.get(s);
      if (!p) break;
      if (p.type === "step/start") return 2;
      if (p.type === "step/end" || p.type === "turn/start") return 1;
      if (p.type === "turn/end") return 0;
    }
    return typeof e.data?.step === "number" && e.data.step > 0 ? 2 : typeof e.data?.turn === "number" ? 1 : 0;
  }

  /** The seq of the event that answers or starts the same tool call, searched in the loaded pages near seq. */
  partner(seq: number, callId: string): number | undefined {
    const e = this.get(seq);
    if (!e) return undefined;
    const forward = e.type !== "tool/result";
    for (let k = 1; k < 4 * pageSize; k++) {
      const s = forward ? seq + k : seq - k;
      if (s < 0 || s >= this.length) break;
      const p = this.get(s);
      if (!p) continue;
      if (forward && p.type === "tool/result" && (p.data?.message?.toolCallId === callId)) return s;
      if (!forward && p.type === "tool/call" && p.data?.callId === callId) return s;
      if (!forward && p.type === "assistant/message" && s < seq) {
        const blocks = p.data?.message?.content ?? [];
        if (blocks.some((b: any) => b?.type === "tool-call" && b.id === callId)) return s;
      }
    }
    return undefined;
  }
}
