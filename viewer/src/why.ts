// The provenance tree of an event (GET …/why), drawn on demand: a node's
// children are drawn when it is expanded, a page at a time, so the tree of
// a checkpoint that replaced thousands of nodes opens at once. A small
// tree opens fully expanded.

import { h } from "./dom";
import { message, messageText } from "./events";
import type { Log } from "./log";

/** A node of GET …/why. */
export interface WhyNode {
  seq: number;
  type: string;
  relation?: string;
  replace?: { startSeq: number; endSeq: number };
  repeated?: boolean;
  summary?: string;
  derivedFrom?: WhyNode[];
}

/** Children drawn per page under an expanded node. */
export const whyPage = 100;

/** A tree of at most this many nodes opens fully expanded. */
const expandAll = 200;

/** The number of nodes of the tree under n, counting n, stopping past limit. */
function size(n: WhyNode, limit: number): number {
  let c = 1;
  for (const k of n.derivedFrom ?? []) {
    c += size(k, limit - c);
    if (c > limit) break;
  }
  return c;
}

/** The provenance tree of root as a list element; reveal shows a seq in the timeline. */
export function whyTree(root: WhyNode, log: Log, reveal: (seq: number) => void, label: string): HTMLElement {
  const all = size(root, expandAll) <= expandAll;
  const ul = h("ul", { class: "why", role: "tree", "aria-label": label });
  ul.append(node(root, log, reveal, all, true));
  return ul;
}

function node(n: WhyNode, log: Log, reveal: (seq: number) => void, all: boolean, open: boolean): HTMLElement {
  const kids = Array.isArray(n.derivedFrom) ? n.derivedFrom : [];
  const e = log.get(n.seq);
  const text = e ? messageText(message(e)).slice(0, 120) : "";
  const li = h(
    "li",
    { role: "treeitem", "aria-expanded": kids.length ? "false" : null, "data-seq": n.seq, "data-children": kids.length || null },
    kids.length ? h("button", { class: "toggle", "aria-label": `expand: ${kids.length} sources` }, "▸") : h("span", { class: "toggle-pad" }),
    h("button", { class: "link", onclick: () => reveal(n.seq) }, `seq ${n.seq}`),
    " ",
    h("span", { class: "type" }, n.type),
    n.relation ? h("span", { class: "badge" }, n.relation) : null,
    n.replace ? h("span", { class: "badge replaces" }, `replaces ${n.replace.startSeq}–${n.replace.endSeq}`) : null,
    n.repeated ? h("span", { class: "muted" }, " (shown above)") : null,
    kids.length ? h("span", { class: "muted" }, ` ${kids.length} source${kids.length === 1 ? "" : "s"}`) : null,
    text && !n.summary ? h("div", { class: "muted why-text" }, text) : null,
    n.summary ? h("div", { class: "muted why-text" }, String(n.summary).slice(0, 200)) : null,
  );
  if (!kids.length) return li;
  const toggle = li.querySelector<HTMLButtonElement>("button.toggle")!;
  let group: HTMLElement | undefined;
  const set = (on: boolean) => {
    li.setAttribute("aria-expanded", String(on));
    toggle.textContent = on ? "▾" : "▸";
    toggle.setAttribute("aria-label", `${on ? "collapse" : "expand"}: ${kids.length} sources`);
    if (!on) {
      group?.remove();
      group = undefined;
      return;
    }
    group = h("ul", { role: "group" });
    li.append(group);
    more(group, kids, 0, log, reveal, all);
  };
  toggle.addEventListener("click", () => set(li.getAttribute("aria-expanded") !== "true"));
  if (open || all) set(true);
  return li;
}

/** Draws kids[from…] a page at a time into group, with a button for the next page. */
function more(group: HTMLElement, kids: WhyNode[], from: number, log: Log, reveal: (seq: number) => void, all: boolean): void {
  const to = all ? kids.length : Math.min(kids.length, from + whyPage);
  for (let i = from; i < to; i++) group.append(node(kids[i], log, reveal, all, false));
  if (to < kids.length) {
    const li = h("li", { class: "why-more" });
    li.append(
      h(
        "button",
        {
          class: "link",
          onclick: () => {
            li.remove();
            more(group, kids, to, log, reveal, all);
          },
        },
        `show ${Math.min(whyPage, kids.length - to)} more of ${kids.length - to} left`,
      ),
    );
    group.append(li);
  }
}
