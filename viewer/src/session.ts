// The view of one session: its timeline beside a panel for the picked
// event (the event itself, what the model saw as of it, its provenance)
// and the session's forks; a live session follows new events.

import { whoami } from "./access";
import { sessionActions } from "./actions";
import { events as readEvents, follow, getJSON, optional, Problem, requestFormats, sessionHash, sessionURL, type Envelope, type SessionInfo } from "./api";
import { h, replace, when } from "./dom";
import { show } from "./events";
import { prettyJSON } from "./json";
import { Log, pageSize } from "./log";
import { lineagePanel } from "./lineage";
import { MessageList } from "./messages";
import { Timeline, type Marks } from "./timeline";
import { whyTree, type WhyNode } from "./why";

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
  const actions = h("div", { class: "actions-slot" });
  replace(root, h("section", { class: "page session" }, h("nav", { class: "crumbs" }, h("a", { href: "#/" }, "Sessions"), " / ", id), title, facts, actions, main));
  // The controls the credential may use, once whoami answers; they act
  // on the picked event (fork) or the whole session.
  const picked = { seq: seq ?? 0 };
  void whoami().then((who) => {
    if (!stop.signal.aborted) replace(actions, sessionActions(who, id, () => picked.seq));
  });
  void open(id, seq, facts, main, picked, stop.signal).catch((err) => {
    facts.textContent = err instanceof Problem ? `Cannot open ${id}: ${err.message}` : String(err);
    facts.classList.add("error");
  });
  return { close: () => stop.abort() };
}

async function open(id: string, seq: number | undefined, facts: HTMLElement, main: HTMLElement, picked: { seq: number }, signal: AbortSignal): Promise<void> {
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
  // The timeline marks what was off the surface as of the picked seq
  // (GET …/shadowed?at=), asked again a moment after the pick settles.
  let remarkTimer = 0;
  const remark = () => {
    clearTimeout(remarkTimer);
    remarkTimer = window.setTimeout(() => {
      const at = panel.seq;
      void marks(id, at, signal).then((m) => {
        if (!m || at !== panel.seq) return;
        Object.assign(tl.marks, { shadowed: undefined, onSurface: undefined, replacedBy: undefined }, m);
        tl.invalidate();
      });
    }, 150);
  };
  tl.onPick = (s) => {
    picked.seq = s;
    panel.pick(s);
    remark();
    const q = sessionHash(id, s);
    if (location.hash !== q) history.replaceState(null, "", q);
  };
  replace(main, h("div", { class: "left" }, tl.el), panel.el);
  let info: SessionInfo | undefined;
  renderFacts(facts, info, log);
  tl.render();
  if (seq !== undefined && seq < length) tl.pick(seq);
  else if (length > 0) {
    picked.seq = 0;
    tl.marks.picked = 0;
    panel.pick(0);
    remark();
  }
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

  // Live: new events arrive without a reload. While the picked event is
  // the last one (the reader is at the end), the pick follows the newest
  // event, a moment after a burst settles.
  facts.append(" ", live);
  let followTimer = 0;
  void follow(
    id,
    log.length,
    (e: Envelope) => {
      const stick = tl.atEnd();
      const atLast = panel.seq >= log.length - 1;
      log.append(e);
      live.hidden = false;
      renderFacts(facts, info, log, live);
      if (stick) requestAnimationFrame(() => tl.toEnd());
      panel.grew();
      if (atLast) {
        clearTimeout(followTimer);
        followTimer = window.setTimeout(() => {
          if (!signal.aborted) tl.pick(log.length - 1);
        }, 200);
      } else if (e.surfaceOp !== undefined) remark();
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
 * Which events were no longer on the surface as of seq at: GET
 * …/shadowed?at= when the server has it (with the replacement that
 * shadowed each), else every surface event up to at missing from GET
 * …/surface?at=.
 */
async function marks(id: string, at: number, signal: AbortSignal): Promise<Pick<Marks, "shadowed" | "onSurface" | "replacedBy" | "at"> | undefined> {
  try {
    const s = await optional("shadowed", () => getJSON<Shadowed>(sessionURL(id, "/shadowed", { at }), signal));
    if (s) return { at, shadowed: new Set(s.shadowed), replacedBy: new Map(Object.entries(s.replacedBy ?? {}).map(([k, v]) => [Number(k), v])) };
    return { at, onSurface: new Set(await getJSON<number[]>(sessionURL(id, "/surface", { at }), signal)) };
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
  /** The picked seq. */
  seq = 0;
  private gen = 0;
  private whySeq?: number;
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
        if (live()) replace(this.body, h("p", { class: "error", role: "alert" }, err instanceof Problem ? err.message : String(err)));
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
      s.synthetic ? h("p", { class: s.synthetic.startsWith("crash repair") ? "why-synth repair" : "why-synth", role: "note" }, h("strong", {}, "Why it exists: "), s.synthetic) : null,
      s.replaces ? h("p", {}, `Replaced the surface range ${s.replaces.start}–${s.replaces.end}.`) : null,
      h("pre", { class: "json" }, prettyJSON(e)),
    );
  }

  /**
   * What the model saw as of the picked seq: the messages (any session
   * has them, with or without a request/header), the tokens, and the
   * request when the session has a header by then. Only a failure to read
   * the messages fails the pane; the tokens and the request fail on their
   * own.
   */
  private async sawTab(live: () => boolean): Promise<void> {
    const at = this.seq;
    const id = this.log.id;
    const [msgs, surface, tokens] = await Promise.all([
      getJSON<any[]>(sessionURL(id, "/messages", { at })),
      getJSON<number[]>(sessionURL(id, "/surface", { at })),
      optional("tokens", () => getJSON<any>(sessionURL(id, "/tokens", { at }))).catch(() => undefined),
    ]);
    if (!live()) return;
    const list = new MessageList(msgs, surface, `Messages as of seq ${at}`, {
      reveal: (s) => this.tl.reveal(s),
      why: (s) => ((this.whySeq = s), this.show("why"), (this.whySeq = undefined)),
    });
    const tok = tokens ? this.tokens(tokens, at) : this.estimate(msgs, at);
    const req = h("div", { class: "request" });
    replace(
      this.body,
      h("h2", {}, h("span", { id: "msg-count" }, `${msgs.length} message${msgs.length === 1 ? "" : "s"}`), ` as of seq ${at}`),
      tok,
      list.el,
      h("h3", {}, "The request"),
      req,
    );
    list.render();
    await this.request(req, at, live);
  }

  private tokens(t: any, at: number): HTMLElement {
    const rows = (t.perTurn ?? []).map((p: any) => h("tr", {}, h("td", {}, p.turn ?? "—"), h("td", { class: "num" }, p.startSeq), h("td", { class: "num" }, p.tokens)));
    return h(
      "details",
      { class: "tokens", "data-at": at },
      h("summary", {}, `≈ ${t.total} tokens in total as of seq ${at} (${t.baseline ?? "estimated"}; surface ${t.surfaceTokens ?? "?"}, header ${t.headerTokens ?? "?"})`),
      h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "Turn"), h("th", {}, "From seq"), h("th", {}, "Tokens"))), h("tbody", {}, ...rows)),
    );
  }

  /** A rough estimate when the server has no /tokens: four characters a token. */
  private estimate(msgs: any[], at: number): HTMLElement {
    const chars = msgs.reduce((n, m) => n + JSON.stringify(m.content ?? "").length, 0);
    return h("p", { class: "tokens", "data-at": at }, `≈ ${Math.ceil(chars / 4)} tokens as of seq ${at} (estimated here at four characters a token; this server has no token view)`);
  }

  /**
   * The request as of at, in the shapes the server offers (requestFormats).
   * A session with no request/header by then has no request: a note says
   * so and no shape is offered. Otherwise every shape has a button, and a
   * shape the server cannot render at this seq (a tool call still
   * unanswered, say) shows its error below the buttons, which stay.
   */
  private async request(el: HTMLElement, at: number, live: () => boolean): Promise<void> {
    const id = this.log.id;
    const [formats, header] = await Promise.all([requestFormats(id), getJSON<unknown>(sessionURL(id, "/header", { at })).catch(() => undefined)]);
    if (!live()) return;
    const none = () => replace(el, h("p", { class: "muted no-request" }, `No request/header as of seq ${at}: the model had not been asked yet, so there is no request to show.`));
    if (header === null) {
      none();
      return;
    }
    const pre = h("pre", { class: "json", id: "request-json" });
    const err = h("p", { class: "request-error", role: "status", hidden: true });
    const bar = h("div", { class: "formats", role: "group", "aria-label": "Request shape" });
    let asked = 0;
    const load = async (f: string) => {
      const n = ++asked;
      this.format = f;
      for (const b of bar.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.format === f));
      try {
        const body = await getJSON<any>(sessionURL(id, "/request", f === "logbook" ? { at } : { at, format: f }));
        if (!live() || n !== asked) return;
        err.hidden = true;
        pre.hidden = false;
        pre.textContent = prettyJSON(body);
      } catch (e) {
        if (!live() || n !== asked) return;
        if (e instanceof Problem && e.code === "REQUEST_HEADER_MISSING") return none();
        pre.hidden = true;
        err.hidden = false;
        // 409: the state as of this seq has no such body (calls still
        // unanswered, say), a fact about the log, not a failure.
        err.classList.toggle("muted", e instanceof Problem && e.status === 409);
        err.classList.toggle("error", !(e instanceof Problem && e.status === 409));
        err.textContent = `${f}: ${e instanceof Problem ? e.message : String(e)}`;
      }
    };
    if (formats.length > 1) for (const f of formats) bar.append(h("button", { "data-format": f, "aria-pressed": "false", onclick: () => void load(f) }, f));
    replace(el, formats.length > 1 ? bar : null, err, pre);
    await load(formats.includes(this.format) ? this.format : "logbook");
  }

  /** The provenance tree of seq, drawn on demand (whyTree). */
  private async whyTab(seq: number, live: () => boolean): Promise<void> {
    const tree = await optional("why", () => getJSON<WhyNode>(sessionURL(this.log.id, "/why", { seq })));
    if (!live()) return;
    if (!tree) {
      replace(this.body, h("p", { class: "muted" }, "This server has no provenance view (GET /v1/sessions/{id}/why)."));
      return;
    }
    replace(this.body, h("h2", {}, `Where seq ${seq} comes from`), whyTree(tree, this.log, (s) => this.tl.reveal(s), `Provenance of seq ${seq}`));
  }
}
