// The messages the model saw as of a seq, as a virtualized list: only the
// messages in view (and a margin) are in the DOM, so a list of thousands
// opens as fast as one of ten. A message shows its first lines; a longer
// one expands in place (its row then takes its measured height).

import { h } from "./dom";
import { messageText } from "./events";

/** The height of a collapsed message in pixels (style.css: .msg). */
export const messageHeight = 64;

/** Messages drawn above and below the ones in view. */
export const messageOverscan = 8;

/** The characters of a message's text that a collapsed row holds. */
const collapsedChars = 400;

/** What a message's links do: show its event in the timeline, open its provenance. */
export interface MessageActions {
  reveal(seq: number): void;
  why(seq: number): void;
}

/** A virtualized list of messages, each with the seq of its surface node. */
export class MessageList {
  /** The scrolling box holding the list. */
  readonly el: HTMLElement;
  private list: HTMLOListElement;
  /** Measured heights of expanded messages by index; the rest are messageHeight. */
  private tall = new Map<number, number>();
  /** Tops of every message, recomputed when an expanded height changes. */
  private tops: number[] = [];
  private drawn = new Map<number, HTMLElement>();
  private frame = 0;

  constructor(
    private msgs: any[],
    private seqs: (number | undefined)[],
    label: string,
    private actions: MessageActions,
  ) {
    this.list = h("ol", { class: "messages", "aria-label": label, "data-count": msgs.length });
    this.el = h("div", { class: "messages-box" }, this.list);
    this.el.addEventListener("scroll", () => this.schedule());
    new ResizeObserver(() => this.schedule()).observe(this.el);
    this.layout();
  }

  /** Recomputes the tops and the list's height. */
  private layout(): void {
    let y = 0;
    this.tops = this.msgs.map((_, i) => {
      const top = y;
      y += this.tall.get(i) ?? messageHeight;
      return top;
    });
    this.list.style.height = `${y}px`;
  }

  /** Draws on the next animation frame. */
  schedule(): void {
    if (!this.frame) this.frame = requestAnimationFrame(() => ((this.frame = 0), this.render()));
  }

  /** The first message whose bottom is below y. */
  private indexAt(y: number): number {
    let lo = 0;
    let hi = this.msgs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.tops[mid] + (this.tall.get(mid) ?? messageHeight) <= y) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Draws the messages in view and the margin around them; the rest leave the DOM. */
  render(): void {
    const view = this.el.clientHeight || 600;
    const first = Math.max(0, this.indexAt(this.el.scrollTop) - messageOverscan);
    const last = Math.min(this.msgs.length, this.indexAt(this.el.scrollTop + view) + 1 + messageOverscan);
    const keep = new Map<number, HTMLElement>();
    for (let i = first; i < last; i++) {
      const el = this.drawn.get(i) ?? this.row(i);
      el.style.top = `${this.tops[i]}px`;
      keep.set(i, el);
    }
    for (const [i, el] of this.drawn) if (!keep.has(i)) el.remove();
    this.drawn = keep;
    let at: ChildNode | null = this.list.firstChild;
    for (const el of keep.values()) {
      if (at === el) at = el.nextSibling;
      else this.list.insertBefore(el, at);
    }
  }

  private row(i: number): HTMLElement {
    const m = this.msgs[i];
    const s = this.seqs[i];
    const text = messageText(m) || "(no text)";
    const long = text.length > collapsedChars || text.split("\n", 4).length > 3;
    const body = h("div", { class: "msg-text" }, long ? text.slice(0, collapsedChars) : text);
    const li = h(
      "li",
      { class: `msg role-${m?.role}`, "data-seq": s ?? "", "data-index": i, "aria-posinset": i + 1, "aria-setsize": this.msgs.length },
      h("span", { class: "msg-n" }, `${i + 1}.`),
      h("span", { class: "badge role" }, String(m?.role ?? "?")),
      s !== undefined ? h("button", { class: "link", title: "show this event in the timeline", onclick: () => this.actions.reveal(s) }, `seq ${s}`) : null,
      s !== undefined ? h("button", { class: "link", title: "where this message comes from", onclick: () => this.actions.why(s) }, "why?") : null,
      body,
    );
    if (long) {
      const more = h("button", { class: "link more", "aria-expanded": "false" }, `show all (${text.length} characters)`);
      more.addEventListener("click", () => {
        const open = !li.classList.contains("expanded");
        li.classList.toggle("expanded", open);
        more.setAttribute("aria-expanded", String(open));
        more.textContent = open ? "show less" : `show all (${text.length} characters)`;
        body.textContent = open ? text : text.slice(0, collapsedChars);
        if (open) this.tall.set(i, Math.max(messageHeight, li.offsetHeight));
        else this.tall.delete(i);
        this.layout();
        this.render();
      });
      li.append(more);
    }
    return li;
  }
}
