// The Sessions view: every stored session of the tenant, newest activity
// first, with a filter by id or text; an operator picks the tenant.

import { picksTenant, whoami } from "./access";
import { listActions } from "./actions";
import { events as readEvents, getJSON, optional, Problem, sessionHash, sessionURL, setTenant, tenant, tenantPattern, unsupported, type Listed, type SessionInfo } from "./api";
import { h, replace, when } from "./dom";

/** A listed session and what the view learnt of it since. */
interface Entry extends Listed {
  /** Messages on the surface; −1 when they could not be read. */
  messages?: number;
  /** The torn-tail warning of GET /v1/sessions/{id}. */
  torn?: string;
}

interface Page {
  sessions: Listed[];
  nextCursor: string | null;
}

/** Whether the server lists by activity (order=activity); false once it refused. */
let activityOrder = true;

/** Reads every page of the listing, newest activity first (recent on a server without order=activity). */
export async function listAll(): Promise<Listed[]> {
  const out: Listed[] = [];
  let order = activityOrder ? "activity" : "recent";
  let cursor: string | null = null;
  for (;;) {
    let page: Page;
    try {
      page = await getJSON<Page>(`v1/sessions?order=${order}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    } catch (err) {
      if (order === "activity" && unsupported(err)) {
        order = "recent";
        activityOrder = false;
        continue;
      }
      throw err;
    }
    out.push(...page.sessions);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return out;
}

/** When a session last changed: the listing's lastActivity, else its creation. */
function activity(s: Listed): number | undefined {
  return s.lastActivity ?? s.header?.createdAt;
}

/** The parent of a listed session and its fork point. */
export function parentOf(s: Listed): { id: string; seq?: number } | undefined {
  if (s.parent) return s.parent;
  const p = s.header?.parentSession;
  if (!p) return undefined;
  const n = s.header?.inheritedEventCount;
  return { id: p, seq: typeof n === "number" && n > 0 ? n - 1 : undefined };
}

/** Renders the Sessions view into root. */
export async function sessionsView(root: HTMLElement, signal: AbortSignal): Promise<void> {
  const status = h("p", { class: "muted", role: "status" }, "Loading sessions…");
  const filter = h("input", {
    type: "search",
    id: "filter",
    placeholder: "Filter by id or text",
    "aria-label": "Filter sessions by id or text",
    autocomplete: "off",
  });
  const body = h("tbody");
  const table = h(
    "table",
    { class: "sessions", "aria-label": "Sessions, newest activity first" },
    h(
      "thead",
      {},
      h("tr", {}, ...["Session", "Events", "Created", "Last active", "Parent", "Messages", "State"].map((t) => h("th", { scope: "col" }, t))),
    ),
    body,
  );
  const toolbar = h("div", { class: "toolbar" }, filter);
  replace(root, h("section", { class: "page" }, h("h1", {}, "Sessions"), toolbar, status, table));
  void whoami().then((who) => {
    if (signal.aborted) return;
    if (picksTenant(who.role)) toolbar.append(" ", tenantPicker());
    const actions = listActions(who);
    if (actions) toolbar.after(actions);
  });
  let all: Entry[];
  try {
    all = await listAll();
  } catch (err) {
    status.textContent = err instanceof Problem ? `Cannot list sessions: ${err.message}` : String(err);
    return;
  }
  all.sort((a, b) => (activity(b) ?? 0) - (activity(a) ?? 0) || a.id.localeCompare(b.id));
  const render = () => {
    const q = filter.value.trim().toLowerCase();
    const shown = all.filter((s) => !q || haystack(s).includes(q));
    replace(body, ...shown.map(row));
    status.textContent = `${shown.length} of ${all.length} sessions`;
  };
  filter.addEventListener("input", render);
  render();
  void details(all, body, signal);
}

/** The tenants GET /v1/tenants names, when the server has the route. */
interface Tenants {
  tenants: string[];
}

/**
 * An operator's tenant picker: a name (checked against the tenant name
 * rule before it is used) with the tenants the server lists as
 * suggestions. Picking one lists and opens that tenant's sessions: every
 * /v1 call of the tab then carries ?tenant=.
 */
function tenantPicker(): HTMLElement {
  const own = "default"; // an operator's own tenant
  const input = h("input", {
    type: "text",
    id: "tenant",
    list: "tenant-names",
    value: tenant() || own,
    pattern: tenantPattern.source.slice(1, -1),
    spellcheck: "false",
    autocomplete: "off",
    "aria-label": "Tenant (Enter to list its sessions)",
  });
  const names = h("datalist", { id: "tenant-names" });
  void optional("tenants", () => getJSON<Tenants>("v1/tenants")).then(
    (t) => {
      for (const n of t?.tenants ?? []) names.append(h("option", { value: n }));
    },
    () => {},
  );
  const pick = () => {
    const t = input.value.trim();
    if (!tenantPattern.test(t)) {
      input.setCustomValidity("a tenant name is a-z, 0-9 and -, starting with a letter or digit, at most 63");
      input.reportValidity();
      return;
    }
    input.setCustomValidity("");
    if (t === (tenant() || own)) return;
    setTenant(t === own ? "" : t);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  };
  input.addEventListener("change", pick);
  input.addEventListener("keydown", (ev: KeyboardEvent) => ev.key === "Enter" && pick());
  return h("label", { class: "tenant" }, "Tenant ", input, names);
}

/** Sessions whose counts and state the view fetches (the rest show "…"). */
const detailed = 100;

/**
 * Fills in the listed sessions' event counts (an empty window of events,
 * whose Logbook-Next-Seq is cheap), then their message counts and torn or
 * corrupt badges (each a read of the session's whole log), a few sessions
 * at a time. Leaving the view stops it.
 */
async function details(all: Entry[], body: HTMLElement, signal: AbortSignal): Promise<void> {
  const redraw = (s: Entry) => body.querySelector(`tr[data-session="${CSS.escape(s.id)}"]`)?.replaceWith(row(s));
  const each = async (n: number, f: (s: Entry) => Promise<void>) => {
    const queue = all.slice(0, detailed).filter((s) => !s.error);
    const work = async () => {
      for (let s = queue.shift(); s && !signal.aborted; s = queue.shift()) {
        try {
          await f(s);
        } catch (err) {
          if (signal.aborted) return;
          s.messages = -1;
          if (err instanceof Problem) s.error = { code: err.code, detail: err.message };
        }
        redraw(s);
      }
    };
    await Promise.all(Array.from({ length: n }, work));
  };
  await each(4, async (s) => {
    if (s.eventCount !== undefined) return;
    const page = await readEvents(s.id, 0, 0, signal);
    if (page.nextSeq !== undefined) s.eventCount = page.nextSeq;
  });
  await each(2, async (s) => {
    const [info, surface] = await Promise.all([getJSON<SessionInfo>(sessionURL(s.id), signal), getJSON<number[]>(sessionURL(s.id, "/surface"), signal)]);
    s.eventCount = info.length;
    s.messages = surface.length;
    if (info.torn) s.torn = info.warning ?? "torn";
  });
}

/** The text a filter matches: id, parent, working directory, error. */
function haystack(s: Listed): string {
  return [s.id, parentOf(s)?.id, s.header?.cwd, s.error?.code, s.error?.detail, s.live ? "live" : "stored"].filter(Boolean).join(" ").toLowerCase();
}

function row(s: Entry): HTMLTableRowElement {
  const p = parentOf(s);
  const badges: (HTMLElement | string)[] = [h("span", { class: s.live ? "badge live" : "badge" }, s.live ? "live" : "stored")];
  if (s.torn) badges.push(h("span", { class: "badge bad", title: s.torn }, "torn"));
  if (s.error) badges.push(h("span", { class: "badge bad", title: s.error.detail }, s.error.code === "CORRUPT_LOG" ? "corrupt" : s.error.code));
  return h(
    "tr",
    { "data-session": s.id },
    h("th", { scope: "row" }, h("a", { href: sessionHash(s.id) }, s.id)),
    h("td", { class: "num", "data-col": "events" }, s.eventCount ?? (s.error ? "—" : "…")),
    h("td", {}, when(s.header?.createdAt)),
    h("td", {}, when(s.lastActivity)),
    h("td", {}, p ? h("a", { href: sessionHash(p.id, p.seq) }, p.id, p.seq !== undefined ? ` @${p.seq}` : "") : "—"),
    h("td", { class: "num", "data-col": "messages" }, s.messages === undefined ? (s.error ? "—" : "…") : s.messages < 0 ? "—" : s.messages),
    h("td", { "data-col": "state" }, ...badges),
  );
}
