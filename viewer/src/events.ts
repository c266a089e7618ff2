// What the timeline says about one event: its family (the colour), a one
// line summary, whether the store or a repair wrote it and why, and the
// links it carries (a replaced range, a tool call id).

import type { Envelope } from "./api";

/** The colour family of an event type. */
export type Family = "boundary" | "system" | "user" | "assistant" | "tool" | "header" | "compaction" | "store" | "other";

/** How the timeline shows one event. */
export interface Shown {
  family: Family;
  summary: string;
  /** Why the event exists when no agent wrote it (repair, store, fork). */
  synthetic?: string;
  /** The surface range [start, end] a replacement took off the surface. */
  replaces?: { start: number; end: number };
  /** The tool call id an event starts or answers. */
  callId?: string;
  /** A surface event: it may become a message the model sees. */
  surface: boolean;
  /** The checkpoint of a compaction. */
  checkpoint: boolean;
}

/** The family of a type. */
export function family(type: string): Family {
  if (type.startsWith("turn/") || type.startsWith("step/")) return "boundary";
  if (type === "system/message" || type === "developer/message") return "system";
  if (type === "user/message") return "user";
  if (type.startsWith("assistant/")) return "assistant";
  if (type.startsWith("tool/")) return "tool";
  if (type.startsWith("request/") || type === "todo/write") return "header";
  if (type.startsWith("compaction/")) return "compaction";
  if (type.startsWith("session/")) return "store";
  return "other";
}

/** The message a surface event carries. */
export function message(e: Envelope): any {
  const d = e.data;
  if (!d || typeof d !== "object") return undefined;
  if (d.message && typeof d.message === "object") return d.message;
  if (typeof d.role === "string") return d;
  return undefined;
}

/** The text of a message's blocks, shortened for a row. */
export function messageText(m: any): string {
  if (!m || !Array.isArray(m.content)) return "";
  const parts: string[] = [];
  for (const b of m.content) {
    if (b?.type === "text" && typeof b.text === "string") parts.push(b.text);
    else if (b?.type === "tool-call") parts.push(`⚙ ${b.name}(${clip(String(b.arguments ?? ""), 80)})`);
    else if (b?.type) parts.push(`[${b.type}]`);
  }
  return parts.join(" ");
}

/** The first n characters of s on one line. */
export function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? one.slice(0, n - 1) + "…" : one;
}

/** The replaced range of a replace surface operation. */
export function replaced(e: Envelope): { start: number; end: number } | undefined {
  const op = e.surfaceOp;
  if (op && typeof op === "object" && (op.op === "replace" || op.replace)) return { start: op.startSeq, end: op.endSeq };
  return undefined;
}

/** Why a turn/end or step/end was written by a repair, from its reason. */
function closerWhy(kind: string | undefined): string | undefined {
  if (kind === "interrupted") return "crash repair: the session stopped inside this turn; resuming it closed the turn";
  if (kind === "forked") return "fork: the fork point cut an open turn, so the child closes it";
  return undefined;
}

/**
 * How to show e; next, when known, is the event after it (a step/end
 * right before a repair's turn/end is itself a closer).
 */
export function show(e: Envelope, next?: Envelope): Shown {
  const d = e.data ?? {};
  const s: Shown = { family: family(e.type), summary: "", surface: e.surfaceOp !== undefined, checkpoint: false };
  const m = message(e);
  switch (e.type) {
    case "turn/start":
      s.summary = `turn ${d.turn}`;
      break;
    case "turn/end":
      s.summary = `turn ${d.turn} · ${d.reason?.kind ?? ""}`;
      s.synthetic = closerWhy(d.reason?.kind);
      break;
    case "step/start":
      s.summary = `turn ${d.turn} · step ${d.step}`;
      break;
    case "step/end":
      s.summary = `turn ${d.turn} · step ${d.step}`;
      if (next?.type === "turn/end") {
        const why = closerWhy(next.data?.reason?.kind);
        if (why) s.synthetic = why.replace("closed the turn", "closed the step and the turn");
      }
      break;
    case "tool/call":
      s.summary = `⚙ ${d.name}(${clip(String(d.arguments ?? ""), 100)})`;
      s.callId = d.callId;
      break;
    case "tool/result": {
      s.summary = (m?.isError ? "✗ " : "") + clip(messageText(m), 160);
      s.callId = m?.toolCallId;
      const code = d.error?.code;
      if (code === "TOOL_OUTCOME_UNKNOWN")
        s.synthetic = "crash repair: the tool call had started but its result was never saved, so its outcome is unknown";
      else if (code === "TOOL_NOT_STARTED") s.synthetic = "crash repair: the tool call never started; this error result closes it";
      break;
    }
    case "request/header":
      s.summary = `${d.header?.config?.provider ?? ""} ${d.header?.config?.model ?? ""} · ${d.header?.tools?.length ?? 0} tools · ${d.reason ?? ""}`;
      break;
    case "request/context":
      s.summary = `${d.provider ?? ""} ${d.model ?? ""} · window ${d.contextWindow ?? "?"}`;
      break;
    case "compaction/start":
    case "compaction/end":
      s.summary = `compaction ${clip(String(d.compactionId ?? ""), 13)}`;
      break;
    case "compaction/summary":
      s.summary = `summary of ${d.shadowedSeqs?.length ?? "?"} nodes (${d.shadowedTokenCount ?? "?"} tokens) by ${d.provider ?? ""}/${d.model ?? ""}`;
      if (d.shadowedRange) s.replaces = { start: d.shadowedRange.start, end: d.shadowedRange.end };
      break;
    case "compaction/prune":
      s.summary = `pruned ${d.shadowedSeqs?.length ?? "?"} oversized tool results`;
      if (d.shadowedRange) s.replaces = { start: d.shadowedRange.start, end: d.shadowedRange.end };
      break;
    case "session/end-seed":
      s.synthetic = d.inherited
        ? "store: the events before this one were inherited from the parent session at the fork"
        : "store: a new lifecycle starts here (the session was resumed, or created with a seed)";
      s.summary = d.inherited ? "end of the inherited prefix" : "new lifecycle";
      break;
    case "session/recovered":
      s.synthetic = `store: opening the session cut a torn tail of ${d.tornBytes} bytes from seq ${d.tornFromSeq}`;
      s.summary = d.artifact ? `torn bytes kept in ${d.artifact}` : "torn tail cut";
      break;
    case "session/salvaged":
      s.synthetic = `store: salvaged from the damaged session ${d.salvagedFrom} (${d.damagedBytes} bytes damaged at offset ${d.damagedAtOffset})`;
      s.summary = `salvaged from ${d.salvagedFrom}`;
      break;
    default:
      if (m) s.summary = clip(messageText(m), 160);
      else s.summary = clip(JSON.stringify(d), 160);
  }
  if (m && !s.summary) s.summary = clip(messageText(m), 160);
  if (e.type === "user/message" && m?.source?.kind === "compact-checkpoint") s.checkpoint = true;
  if (e.type === "assistant/message" && !s.callId) {
    const call = (m?.content ?? []).find((b: any) => b?.type === "tool-call");
    if (call) s.callId = call.id;
  }
  const r = replaced(e);
  if (r) s.replaces = r;
  return s;
}
