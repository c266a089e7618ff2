// The Forks panel: the lineage tree of a session (its ancestors, itself,
// its descendants), each child linked at its fork point.

import { getJSON, optional, sessionHash, sessionURL } from "./api";
import { h, replace } from "./dom";
import { listAll, parentOf } from "./sessions";

/** A node of the lineage tree: a session and where it forked from its parent. */
interface Node {
  id: string;
  seq?: number;
  missing?: boolean;
  children?: Node[];
}

/** GET /v1/sessions/{id}/lineage. */
interface Lineage {
  id: string;
  tree: Node;
}

/** The lineage tree of id: the server's when it has the route, else built from the listing. */
async function tree(id: string): Promise<Node> {
  const l = await optional("lineage", () => getJSON<Lineage>(sessionURL(id, "/lineage")));
  if (l) return l.tree;
  const all = await listAll();
  const byId = new Map(all.map((s) => [s.id, s]));
  let root = id;
  const seen = new Set<string>([id]);
  for (;;) {
    const s = byId.get(root);
    const p = s && parentOf(s);
    if (!p || !byId.has(p.id) || seen.has(p.id)) break;
    seen.add(p.id);
    root = p.id;
  }
  const build = (sid: string, seq?: number, depth = 0): Node => ({
    id: sid,
    seq,
    children:
      depth > 64
        ? []
        : all
            .filter((s) => parentOf(s)?.id === sid)
            .sort((a, b) => (a.header?.createdAt ?? 0) - (b.header?.createdAt ?? 0) || a.id.localeCompare(b.id))
            .map((s) => build(s.id, parentOf(s)?.seq, depth + 1)),
  });
  return build(root);
}

/** Renders the Forks panel of session id into body. */
export async function lineagePanel(id: string, body: HTMLElement, live: () => boolean): Promise<void> {
  const t = await tree(id);
  if (!live()) return;
  const node = (n: Node): HTMLElement =>
    h(
      "li",
      { role: "treeitem", "aria-expanded": n.children?.length ? "true" : null, "aria-current": n.id === id ? "page" : null, "data-session": n.id },
      n.missing
        ? h("span", { class: "muted" }, `${n.id} (not stored)`)
        : h("a", { href: sessionHash(n.id, n.seq) }, n.id),
      n.seq !== undefined ? h("span", { class: "muted" }, ` forked at seq ${n.seq}`) : null,
      n.id === id ? h("span", { class: "badge" }, "this session") : null,
      n.children?.length ? h("ul", { role: "group" }, ...n.children.map(node)) : null,
    );
  replace(body, h("h2", {}, "Forks"), h("ul", { class: "lineage", role: "tree", "aria-label": "Lineage: parents, children and fork points" }, node(t)), h("p", { class: "muted" }, "A child opens at its fork point: the last event it inherited."));
}
