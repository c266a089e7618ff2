// The timeline: a virtualized list of a session's events (fixed row
// height; only the rows in view exist in the DOM), grouped by turn and step
// with collapsible groups, keyboard navigation, and the marks of the
// surface (shadowed events), compactions (the replaced range) and repairs.

import { clock, h } from "./dom";
import { show, type Shown } from "./events";
import { pageSize, type Log } from "./log";

/** The height of one row in pixels (styles.css: .row). */
export const rowHeight = 26;

/** Rows rendered above and below the visible ones. */
const overscan = 12;

/** What the timeline marks besides the events themselves. */
export interface Marks {
  /** Seqs no longer on the surface (GET …/shadowed); undefined until known. */
  shadowed?: Set<number>;
  /** Seqs on the surface, for a server without …/shadowed. */
  onSurface?: Set<number>;
  /** The event that took a shadowed seq off the surface, when known. */
  replacedBy?: Map<number, number>;
  /** The range a picked compaction replaced. */
  highlight?: { start: number; end: number; by: number };
  /** The picked event. */
  picked?: number;
  /** The seq the shadow marks are as of; later events are not marked. */
  at?: number;
}

/** A row in the DOM: its element, its markup, and the version and row it was drawn for. */
interface Drawn {
  el: HTMLElement;
  html: string;
  version: number;
  row: number;
}

/** The timeline of one session. */
export class Timeline {
  readonly el: HTMLElement;
  private spacer: HTMLElement;
  private active = 0; // the row with keyboard focus (a seq)
  private frame = 0;
  private drawn = new Map<number, Drawn>(); // the rows in the DOM by seq
  private version = 0; // bumped by every change a row may show (not by scrolling)
  marks: Marks = {};
  /** Called when the reader picks an event (click or Enter). */
  onPick: (seq: number) => void = () => {};

  constructor(readonly log: Log) {
    this.spacer = h("div", { class: "spacer" });
    this.el = h(
      "div",
      {
        class: "timeline",
        role: "listbox",
        tabindex: 0,
        "aria-label": `Events of session ${log.id}: arrow keys move, Enter picks, left and right collapse and expand a turn or step`,
      },
      this.spacer,
    );
    this.el.addEventListener("scroll", () => this.schedule());
    this.el.addEventListener("keydown", (ev) => this.key(ev));
    this.el.addEventListener("click", (ev) => this.click(ev));
    new ResizeObserver(() => this.schedule()).observe(this.el);
    log.onChange = () => this.invalidate();
  }

  /** Redraws every row on the next frame: the log or the marks changed. */
  invalidate(): void {
    this.version++;
    this.schedule();
  }

  /** Renders on the next animation frame (rows already drawn are kept as they are). */
  schedule(): void {
    if (!this.frame) this.frame = requestAnimationFrame(() => ((this.frame = 0), this.render()));
  }

  /** Whether the view shows the last row (a live session then keeps it in view). */
  atEnd(): boolean {
    return this.el.scrollTop + this.el.clientHeight >= this.el.scrollHeight - rowHeight * 2;
  }

  /** Scrolls so the last row is in view. */
  toEnd(): void {
    this.el.scrollTop = this.el.scrollHeight;
  }

  /**
   * Scrolls seq into view (centred when it is far away) and gives it the
   * keyboard focus. It draws at once, not on the next frame, so the
   * active row (aria-activedescendant) is marked by the time the key or
   * click that moved it has been handled: a reader of the attribute (a
   * screen reader, a test) right after the key sees the new row.
   */
  reveal(seq: number, centre = true): void {
    this.active = Math.max(0, Math.min(seq, this.log.length - 1));
    const top = this.log.rowOf(this.active) * rowHeight;
    const view = this.el.clientHeight;
    if (top < this.el.scrollTop || top + rowHeight > this.el.scrollTop + view) {
      this.el.scrollTop = centre ? top - view / 2 : top < this.el.scrollTop ? top : top + rowHeight - view;
    }
    this.version++;
    this.render();
  }

  /** Draws the rows in view, fetching the pages they need. */
  render(): void {
    const rows = this.log.rows();
    this.spacer.style.height = `${rows * rowHeight}px`;
    const first = Math.max(0, Math.floor(this.el.scrollTop / rowHeight) - overscan);
    const last = Math.min(rows, Math.ceil((this.el.scrollTop + this.el.clientHeight) / rowHeight) + overscan);
    const fromSeq = this.log.seqOf(first);
    const toSeq = last > first ? this.log.seqOf(last - 1) + 1 : fromSeq;
    void this.log.ensure(fromSeq - pageSize / 4, toSeq + pageSize / 4).catch(() => {});
    // A row keeps its element across re-renders (one that changed gets
    // the new attributes and children in place), so a click whose press
    // and release straddle a re-render (a page arriving, the shadow marks
    // of a pick, a live event) still lands on its row. Scrolling alone
    // only draws the rows that come into view.
    const out: HTMLElement[] = [];
    const kept = new Map<number, Drawn>();
    for (let r = first; r < last; r++) {
      const seq = this.log.seqOf(r);
      const old = this.drawn.get(seq);
      let use: Drawn;
      if (old && old.version === this.version && old.row === r) use = old;
      else {
        const el = this.row(r, seq);
        const html = el.outerHTML;
        if (old && old.html !== html) morph(old.el, el);
        use = old ? { el: old.el, html, version: this.version, row: r } : { el, html, version: this.version, row: r };
      }
      kept.set(seq, use);
      out.push(use.el);
    }
    for (const [seq, d] of this.drawn) if (kept.get(seq) !== d) d.el.remove();
    this.drawn = kept;
    out.forEach((el, i) => {
      const at = this.spacer.children[i];
      if (at !== el) this.spacer.insertBefore(el, at ?? null);
    });
    const act = this.el.querySelector(`#ev-${this.active}`);
    if (act) this.el.setAttribute("aria-activedescendant", act.id);
    else this.el.removeAttribute("aria-activedescendant");
  }

  private row(r: number, seq: number): HTMLElement {
    const e = this.log.get(seq);
    const style = `top:${r * rowHeight}px`;
    if (!e) return h("div", { class: "row loading", style, role: "option", id: `ev-${seq}`, "data-seq": seq, "aria-selected": "false" }, h("span", { class: "seq" }, seq), h("span", { class: "muted" }, "loading…"));
    const s = show(e, this.log.get(seq + 1));
    const m = this.marks;
    const shadowed = s.surface && (m.shadowed ? m.shadowed.has(seq) : m.onSurface !== undefined && seq <= (m.at ?? Infinity) && !m.onSurface.has(seq));
    const hl = m.highlight && seq >= m.highlight.start && seq <= m.highlight.end;
    const cls = ["row", `fam-${s.family}`];
    if (s.synthetic) cls.push("synthetic");
    if (shadowed) cls.push("shadowed");
    if (hl) cls.push("hl");
    if (m.highlight?.by === seq) cls.push("hl-by");
    if (seq === this.active) cls.push("active");
    if (seq === m.picked) cls.push("picked");
    const head = e.type === "turn/start" || e.type === "step/start";
    const collapsed = head && this.log.collapsed(seq);
    return h(
      "div",
      {
        class: cls.join(" "),
        style,
        role: "option",
        id: `ev-${seq}`,
        "data-seq": seq,
        "data-type": e.type,
        "aria-selected": seq === m.picked ? "true" : "false",
        "aria-expanded": head ? String(!collapsed) : null,
      },
      h("span", { class: "seq" }, seq),
      h("span", { class: "time" }, clock(e.time)),
      h("span", { class: "indent", style: `width:${this.log.depth(seq) * 14}px` }),
      head ? h("button", { class: "toggle", tabindex: -1, "data-toggle": seq, "aria-label": collapsed ? "expand" : "collapse" }, collapsed ? "▸" : "▾") : h("span", { class: "toggle-pad" }),
      h("span", { class: "type" }, e.type),
      ...this.badges(seq, s, shadowed),
      h("span", { class: "summary" }, s.summary),
      collapsed ? h("span", { class: "badge" }, `${this.log.hiddenBy(seq)} events hidden`) : null,
    );
  }

  private badges(seq: number, s: Shown, shadowed: boolean): HTMLElement[] {
    const out: HTMLElement[] = [];
    if (s.synthetic) {
      const kind = s.synthetic.startsWith("crash repair") ? "repair" : s.synthetic.startsWith("fork") ? "fork" : "store";
      out.push(h("span", { class: `badge synth synth-${kind}`, title: s.synthetic, "data-why": s.synthetic }, kind));
    }
    if (shadowed) {
      const by = this.marks.replacedBy?.get(seq);
      out.push(h("span", { class: "badge shadow", title: by !== undefined ? `no longer on the surface: replaced by seq ${by}` : "no longer on the surface" }, by !== undefined ? `shadowed by ${by}` : "shadowed"));
    }
    if (s.replaces) out.push(h("button", { class: "badge replaces", tabindex: -1, "data-range": `${s.replaces.start}-${s.replaces.end}`, "data-by": seq, title: "highlight the replaced range" }, `${s.checkpoint ? "checkpoint · " : ""}replaces ${s.replaces.start}–${s.replaces.end}`));
    if (s.callId) {
      const p = this.log.partner(seq, s.callId);
      if (p !== undefined) out.push(h("button", { class: "badge link", tabindex: -1, "data-jump": p, title: `tool call ${s.callId}` }, this.log.get(seq)?.type === "tool/result" ? `← call ${p}` : `→ result ${p}`));
    }
    return out;
  }

  private click(ev: MouseEvent): void {
    const t = ev.target as HTMLElement;
    const btn = t.closest<HTMLElement>("[data-toggle],[data-range],[data-jump]");
    const row = t.closest<HTMLElement>(".row");
    if (!row) return;
    const seq = Number(row.dataset.seq);
    if (btn?.dataset.toggle) {
      void this.log.toggle(Number(btn.dataset.toggle));
      this.active = seq;
      return;
    }
    if (btn?.dataset.jump) {
      this.pick(Number(btn.dataset.jump));
      return;
    }
    if (btn?.dataset.range) {
      this.highlight(seq, btn.dataset.range);
      return;
    }
    const e = this.log.get(seq);
    if (e) {
      const s = show(e);
      if (s.checkpoint && s.replaces) this.highlight(seq, `${s.replaces.start}-${s.replaces.end}`, false);
    }
    this.pick(seq, false);
    this.el.focus({ preventScroll: true });
  }

  /** Highlights the range a replacement at seq took off the surface (or clears it). */
  private highlight(seq: number, range: string, scroll = true): void {
    const [start, end] = range.split("-").map(Number);
    if (this.marks.highlight?.by === seq && scroll) this.marks.highlight = undefined;
    else {
      this.marks.highlight = { start, end, by: seq };
      if (scroll) this.reveal(start);
    }
    this.invalidate();
  }

  /**
   * Picks seq: the detail panel shows it. A highlighted compaction range
   * stays only while its own event is the one picked.
   */
  pick(seq: number, centre = true): void {
    if (this.marks.highlight && this.marks.highlight.by !== seq) this.marks.highlight = undefined;
    this.marks.picked = seq;
    this.reveal(seq, centre);
    this.onPick(seq);
  }

  private key(ev: KeyboardEvent): void {
    const rows = this.log.rows();
    const page = Math.max(1, Math.floor(this.el.clientHeight / rowHeight) - 1);
    let r = this.log.rowOf(this.active);
    switch (ev.key) {
      case "ArrowDown":
        r = Math.min(rows - 1, r + 1);
        break;
      case "ArrowUp":
        r = Math.max(0, r - 1);
        break;
      case "PageDown":
        r = Math.min(rows - 1, r + page);
        break;
      case "PageUp":
        r = Math.max(0, r - page);
        break;
      case "Home":
        r = 0;
        break;
      case "End":
        r = rows - 1;
        break;
      case "Enter":
        this.pick(this.active, false);
        ev.preventDefault();
        return;
      case "ArrowLeft":
      case "ArrowRight": {
        const e = this.log.get(this.active);
        if (e && (e.type === "turn/start" || e.type === "step/start") && this.log.collapsed(this.active) === (ev.key === "ArrowRight")) void this.log.toggle(this.active);
        ev.preventDefault();
        return;
      }
      default:
        return;
    }
    ev.preventDefault();
    this.reveal(this.log.seqOf(r), false);
  }
}

/**
 * Makes el what to is: its attributes and its children (moved from to).
 * The style goes through the CSSOM, which the page's CSP allows (a style
 * attribute set as text it would refuse).
 */
function morph(el: HTMLElement, to: HTMLElement): void {
  for (const a of [...el.attributes]) if (a.name !== "style" && !to.hasAttribute(a.name)) el.removeAttribute(a.name);
  for (const a of to.attributes) if (a.name !== "style" && el.getAttribute(a.name) !== a.value) el.setAttribute(a.name, a.value);
  if (el.style.cssText !== to.style.cssText) el.style.cssText = to.style.cssText;
  el.replaceChildren(...to.childNodes);
}
