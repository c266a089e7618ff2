// The view of one session: its timeline beside a panel for the picked
// event (the event itself, what the model saw as of it, its provenance)
// and the session's forks; a live session follows new events.

import { events as readEvents, follow, getJSON, optional, Problem, sessionHash, sessionURL, type Envelope, type SessionInfo } from "./api";
import { h, replace, when } from "./dom";
import { message, messageText, show } from "./events";
import { Log, pageSize } from "./log";
import { lineagePanel } from "./lineage";
import { Timeline, type Marks } from "./timeline";

/** The open session view; close stops its follow. */
export interface Opened {
  close(): void;
}

/** Shadowed seqs and their replacements (GET …/shadowed). */
interface Shadowed {
  shadowed: number[];
  replacedBy: Record<string, number>;
}

/** Renders session id into root, with seq picked when given. */
export function sessionView(root: HTMLElement, id: string, seq: number | undefined): Opened {
  const stop = new AbortController();
  const title = h("h1", {}, id);
  const facts = h("p", { class: "facts", role: "status" }, "Opening…");
  const main = h("div", { class: "split" });
  replace(root, h("section", { class: "page session" }, h("nav", { class: "crumbs" }, h("a", { href: "#/" }, "Sessions"), " / ", id), title, facts, main));
  void open(id, seq, facts, main, stop.signal).catch((err) => {
    facts.textContent = err instanceof Problem ? `Cannot open ${id}: ${err.message}` : String(err);
    facts.classList.add("error");
  });
  return { close: () => stop.abort() };
}

async function open(id: string, seq: number | undefined, facts: HTMLElement, main: HTMLElement, signal: AbortSignal): Promise<void> {
  const started = performance.now();
  const firstFrom = seq === undefined ? 0 : Math.max(0, Math.floor(seq / pageSize) * pageSize);
  // The first window of events draws the timeline; the session's
  // description (which costs the server a read of the whole stored log)
  // fills in the facts when it arrives. A server without Logbook-Next-Seq
  // needs the description for the log's length first.
  const infoP = getJSON<SessionInfo>(sessionURL(id), signal);
  infoP.catch(() => {});
  const first = await readEvents(id, firstFrom, firstFrom + pageSize, signal);
  const length = first.nextSeq ?? (await infoP).length;
  if (signal.aborted) return;
  const log = new Log(id, length);
  log.put(first);
  const tl = new Timeline(log);
  const panel = new Panel(log, tl);
  tl.onPick = (s) => {
    panel.pick(s);
    const q = sessionHash(id, s);
    if (location.hash !== q) history.replaceState(null, "", q);
  };
  replace(main, h("div", { class: "left" }, tl.el), panel.el);
  let info: SessionInfo | undefined;
  renderFacts(facts, info, log);
  tl.render();
  if (seq !== undefined && seq < length) tl.pick(seq);
  else if (length > 0) panel.pick(0);
  performance.mark("logbook-timeline-ready");
  document.body.dataset.openMs = String(Math.round(performance.now() - started));
  const live = h("span", { class: "badge live", hidden: true }, "● following");
  void infoP.then(
    (i) => {
      info = i;
      renderFacts(facts, info, log, live);
    },
    (err) => facts.append(" ", h("span", { class: "badge bad", title: err instanceof Problem ? err.message : String(err) }, err instanceof Problem ? err.code : "error")),
  );

  // What no longer is on the surface: after the first rows are drawn.
  const remark = () =>
    void marks(id, signal).then((m) => {
      if (!m) return;
      Object.assign(tl.marks, { shadowed: undefined, onSurface: undefined, replacedBy: undefined }, m);
      tl.invalidate();
    });
  remark();

  // Live: new events arrive without a reload.
  facts.append(" ", live);
  let refresh = 0;
  void follow(
    id,
    log.length,
    (e: Envelope) => {
      const stick = tl.atEnd();
      log.append(e);
      live.hidden = false;
      renderFacts(facts, info, log, live);
      if (stick) requestAnimationFrame(() => tl.toEnd());
      panel.grew();
      clearTimeout(refresh);
      if (e.surfaceOp !== undefined) refresh = window.setTimeout(remark, 300);
    },
    signal,
  ).catch(() => {});
  live.hidden = false;
}

function renderFacts(facts: HTMLElement, info: SessionInfo | undefined, log: Log, live?: HTMLElement): void {
  const parts: (HTMLElement | string)[] = [h("span", { "data-fact": "length" }, `${log.length} events`)];
  if (!info) {
    replace(facts, ...parts, live ?? null);
    return;
  }
  parts.push(" · created ", when(info.header.createdAt), " · ", h("span", { class: info.live ? "badge live" : "badge" }, info.live ? "live" : "stored"));
  if (info.header.parentSession) {
    const n = info.header.inheritedEventCount;
    parts.push(" · forked from ", h("a", { href: sessionHash(info.header.parentSession, n ? n - 1 : undefined) }, info.header.parentSession), n ? ` at seq ${n - 1}` : "");
  }
  if (info.torn) parts.push(" ", h("span", { class: "badge bad", title: info.warning ?? "" }, `torn: ${info.torn.bytes} bytes from seq ${info.torn.fromSeq}`));
  replace(facts, ...parts);
  if (live) facts.append(" ", live);
}

/**
 * Which events no longer are on the surface: GET …/shadowed when the
 * server has it (with the replacement that shadowed each), else every
 * surface event missing from GET …/surface.
 */
async function marks(id: string, signal: AbortSignal): Promise<Pick<Marks, "shadowed" | "onSurface" | "replacedBy"> | undefined> {
  try {
    const s = await optional("shadowed", () => getJSON<Shadowed>(sessionURL(id, "/shadowed"), signal));
    if (s) return { shadowed: new Set(s.shadowed), replacedBy: new Map(Object.entries(s.replacedBy ?? {}).map(([k, v]) => [Number(k), v])) };
    return { onSurface: new Set(await getJSON<number[]>(sessionURL(id, "/surface"), signal)) };
  } catch {
    return undefined;
  }
}

/** The panel tabs. */
type Tab = "event" | "saw" | "why" | "forks";

/** The panel beside the timeline. */
class Panel {
  readonly el: HTMLElement;
  private slider: HTMLInputElement;
  private sliderOut: HTMLOutputElement;
  private body: HTMLElement;
  private tabs = new Map<Tab, HTMLButtonElement>();
  private tab: Tab = "saw";
  private seq = 0;
  private gen = 0;
  private whySeq?: number;
  private formats?: string[]; // request formats the server offers, probed once
  private format = "logbook";

  constructor(
    private log: Log,
    private tl: Timeline,
  ) {
    this.slider = h("input", { type: "range", id: "seq-slider", min: 0, max: Math.max(0, log.length - 1), value: 0, step: 1, "aria-label": "Pick an event by seq" });
    this.sliderOut = h("output", { for: "seq-slider", id: "seq-out" }, "0");
    let t = 0;
    this.slider.addEventListener("input", () => {
      this.sliderOut.textContent = this.slider.value;
      clearTimeout(t);
      t = window.setTimeout(() => this.tl.pick(Number(this.slider.value)), 120);
    });
    const bar = h("div", { class: "tabs", role: "tablist", "aria-label": "Details" });
    for (const [k, label] of [
      ["saw", "What the model saw"],
      ["event", "Event"],
      ["why", "Provenance"],
      ["forks", "Forks"],
    ] as [Tab, string][]) {
      const b = h("button", { role: "tab", id: `tab-${k}`, "aria-controls": "panel-body", "aria-selected": String(k === this.tab), onclick: () => this.show(k) }, label);
      this.tabs.set(k, b);
      bar.append(b);
    }
    bar.addEventListener("keydown", (ev: KeyboardEvent) => {
      if (ev.key !== "ArrowLeft" && ev.key !== "ArrowRight") return;
      const keys = [...this.tabs.keys()];
      const i = (keys.indexOf(this.tab) + (ev.key === "ArrowRight" ? 1 : keys.length - 1)) % keys.length;
      this.show(keys[i]);
      this.tabs.get(keys[i])?.focus();
    });
    this.body = h("div", { class: "panel-body", id: "panel-body", role: "tabpanel", tabindex: 0 });
    const go = h("input", { type: "number", id: "seq-go", min: 0, step: 1, placeholder: "seq", "aria-label": "Go to seq (Enter)", class: "seq-go" });
    go.addEventListener("keydown", (ev: KeyboardEvent) => {
      const n = Number(go.value);
      if (ev.key !== "Enter" || go.value === "" || !Number.isInteger(n)) return;
      this.tl.pick(Math.max(0, Math.min(n, this.log.length - 1)));
      go.value = "";
    });
    this.el = h("aside", { class: "panel", "aria-label": "The picked event" }, h("div", { class: "slider" }, h("label", { for: "seq-slider" }, "Seq"), this.slider, this.sliderOut, go), bar, this.body);
  }

  /** The log grew (live): the slider reaches the new end. */
  grew(): void {
    this.slider.max = String(Math.max(0, this.log.length - 1));
  }

  /** Shows seq in the panel. */
  pick(seq: number): void {
    this.seq = seq;
    this.slider.value = String(seq);
    this.sliderOut.textContent = String(seq);
    this.render();
  }

  private show(t: Tab): void {
    this.tab = t;
    for (const [k, b] of this.tabs) b.setAttribute("aria-selected", String(k === t));
    this.body.setAttribute("aria-labelledby", `tab-${t}`);
    this.render();
  }

  private render(): void {
    const g = ++this.gen;
    const live = () => g === this.gen;
    this.body.setAttribute("aria-labelledby", `tab-${this.tab}`);
    replace(this.body, h("p", { class: "muted" }, "Loading…"));
    const done = (p: Promise<void>) =>
      p.catch((err) => {
        if (live()) replace(this.body, h("p", { class: "error" }, err instanceof Problem ? err.message : String(err)));
      });
    switch (this.tab) {
      case "event":
        void done(this.eventTab(live));
        break;
      case "saw":
        void done(this.sawTab(live));
        break;
      case "why":
        void done(this.whyTab(this.whySeq ?? this.seq, live));
        break;
      case "forks":
        void done(lineagePanel(this.log.id, this.body, live));
        break;
    }
  }

  private async eventTab(live: () => boolean): Promise<void> {
    await this.log.ensure(this.seq, this.seq + 2);
    const e = this.log.get(this.seq);
    if (!live() || !e) return;
    const s = show(e, this.log.get(this.seq + 1));
    replace(
      this.body,
      h("h2", {}, `seq ${e.seq} · ${e.type}`),
      h("p", { class: "muted" }, when(e.time)),
      s.synthetic ? h("p", { class: "why-synth", role: "note" }, h("strong", {}, "Why it exists: "), s.synthetic) : null,
      s.replaces ? h("p", {}, `Replaced the surface range ${s.replaces.start}–${s.replaces.end}.`) : null,
      h("pre", { class: "json" }, JSON.stringify(e, null, 2)),
    );
  }

  /** What the model saw as of the picked seq: the messages, the request, the tokens. */
  private async sawTab(live: () => boolean): Promise<void> {
    const at = this.seq;
    const id = this.log.id;
    const [msgs, surface, tokens] = await Promise.all([
      getJSON<any[]>(sessionURL(id, "/messages", { at })),
      getJSON<number[]>(sessionURL(id, "/surface", { at })),
      optional("tokens", () => getJSON<any>(sessionURL(id, "/tokens", { at }))),
    ]);
    if (!live()) return;
    const list = h("ol", { class: "messages", "aria-label": `Messages as of seq ${at}` });
    msgs.forEach((m, i) => {
      const s = surface[i];
      list.append(
        h(
          "li",
          { class: `msg role-${m.role}`, "data-seq": s ?? "" },
          h("span", { class: "badge role" }, m.role),
          s !== undefined ? h("button", { class: "link", title: "show this event in the timeline", onclick: () => this.tl.reveal(s) }, `seq ${s}`) : null,
          s !== undefined ? h("button", { class: "link", title: "where this message comes from", onclick: () => ((this.whySeq = s), this.show("why"), (this.whySeq = undefined)) }, "why?") : null,
          h("div", { class: "msg-text" }, messageText(m).slice(0, 600) || "(no text)"),
        ),
      );
    });
    const tok = tokens ? this.tokens(tokens) : this.estimate(msgs);
    const req = h("div", { class: "request" });
    replace(
      this.body,
      h("h2", {}, h("span", { id: "msg-count" }, `${msgs.length} messages`), ` as of seq ${at}`),
      tok,
      list,
      h("h3", {}, "The request"),
      req,
    );
    await this.request(req, at, live);
  }

  private tokens(t: any): HTMLElement {
    const rows = (t.perTurn ?? []).map((p: any) => h("tr", {}, h("td", {}, p.turn ?? "—"), h("td", { class: "num" }, p.startSeq), h("td", { class: "num" }, p.tokens)));
    return h(
      "details",
      { class: "tokens" },
      h("summary", {}, `≈ ${t.total} tokens in total (${t.baseline ?? "estimated"}; surface ${t.surfaceTokens ?? "?"}, header ${t.headerTokens ?? "?"})`),
      h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "Turn"), h("th", {}, "From seq"), h("th", {}, "Tokens"))), h("tbody", {}, ...rows)),
    );
  }

  /** A rough estimate when the server has no /tokens: four characters a token. */
  private estimate(msgs: any[]): HTMLElement {
    const chars = msgs.reduce((n, m) => n + JSON.stringify(m.content ?? "").length, 0);
    return h("p", { class: "tokens" }, `≈ ${Math.ceil(chars / 4)} tokens (estimated here at four characters a token; this server has no token view)`);
  }

  /** The reconstructed request, in the shapes the server offers. */
  private async request(el: HTMLElement, at: number, live: () => boolean): Promise<void> {
    const id = this.log.id;
    if (!this.formats) {
      // A server without formats ignores the parameter: it answers an
      // unknown format as it answers none.
      this.formats = ["logbook"];
      const bogus = await optional("format", () => getJSON(sessionURL(id, "/request", { at, format: "no-such-format" })).then(() => false));
      if (bogus === undefined) {
        for (const f of ["openai", "anthropic"]) if (await optional(`format-${f}`, () => getJSON(sessionURL(id, "/request", { at, format: f })))) this.formats.push(f);
      }
    }
    const pre = h("pre", { class: "json", id: "request-json" });
    const bar = h("div", { class: "formats", role: "group", "aria-label": "Request shape" });
    const load = async (f: string) => {
      this.format = f;
      for (const b of bar.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.format === f));
      const body = await getJSON<any>(sessionURL(id, "/request", f === "logbook" ? { at } : { at, format: f }));
      if (live()) pre.textContent = JSON.stringify(body, null, 2);
    };
    if (this.formats.length > 1) for (const f of this.formats) bar.append(h("button", { "data-format": f, "aria-pressed": "false", onclick: () => void load(f) }, f));
    replace(el, this.formats.length > 1 ? bar : null, pre);
    await load(this.formats.includes(this.format) ? this.format : "logbook");
  }

  /** The provenance tree of seq. */
  private async whyTab(seq: number, live: () => boolean): Promise<void> {
    const tree = await optional("why", () => getJSON<any>(sessionURL(this.log.id, "/why", { seq })));
    if (!live()) return;
    if (!tree) {
      replace(this.body, h("p", { class: "muted" }, "This server has no provenance view (GET /v1/sessions/{id}/why)."));
      return;
    }
    replace(this.body, h("h2", {}, `Where seq ${seq} comes from`), h("ul", { class: "why", role: "tree", "aria-label": `Provenance of seq ${seq}` }, this.whyNode(tree)));
  }

  private whyNode(n: any): HTMLElement {
    const kids = Array.isArray(n.derivedFrom) ? n.derivedFrom : [];
    const e = this.log.get(n.seq);
    const text = e ? messageText(message(e)).slice(0, 120) : "";
    return h(
      "li",
      { role: "treeitem", "aria-expanded": kids.length ? "true" : null, "data-seq": n.seq },
      h("button", { class: "link", onclick: () => this.tl.reveal(n.seq) }, `seq ${n.seq}`),
      " ",
      h("span", { class: "type" }, n.type),
      n.relation ? h("span", { class: "badge" }, n.relation) : null,
      n.replace ? h("span", { class: "badge replaces" }, `replaces ${n.replace.startSeq}–${n.replace.endSeq}`) : null,
      n.repeated ? h("span", { class: "muted" }, " (shown above)") : null,
      text && !n.summary ? h("div", { class: "muted why-text" }, text) : null,
      n.summary ? h("div", { class: "muted why-text" }, String(n.summary).slice(0, 200)) : null,
      kids.length ? h("ul", { role: "group" }, ...kids.map((k: any) => this.whyNode(k))) : null,
    );
  }
}
