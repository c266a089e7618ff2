// The typed events of an ADK event: how an ADK session's user messages,
// model replies, function calls and function responses become logbook's
// turns, steps, messages, tool calls and tool results under the
// agent-loop protocol (docs/format.md, "The agent-loop protocol").

import { createHash } from "node:crypto";
import type { Event as AdkEvent } from "@google/adk";
import * as ev from "../events.js";
import type { Input } from "../events.js";
import { encodeJSON } from "../json.js";
import { pack } from "./codec.js";

const loopTypes = new Set<string>([ev.Types.turnStart, ev.Types.turnEnd, ev.Types.stepStart, ev.Types.stepEnd, ev.Types.assistantMessage, ev.Types.toolResult]);

/** isLoopType reports whether Loop.fold reads events of type. */
export function isLoopType(type: string): boolean {
  return loopTypes.has(type);
}

/** The loop state folded from a log: the open turn and step and the calls the open step announced. */
export class Loop {
  /** The open turn, or null. */
  turn: number | null = null;
  /** The highest turn so far. */
  lastTurn = 0;
  /** The open step, or null. */
  step: number | null = null;
  /** The highest step of the open turn. */
  lastStep = 0;
  /** The calls the open step announced, in order, and whether each has a result. */
  calls = new Map<string, boolean>();

  /** fold moves the state past one event of type with data (only loop events count). */
  fold(type: string, data: unknown): void {
    switch (type) {
      case ev.Types.turnStart:
        this.turn = (data as ev.TurnStartData).turn;
        this.lastTurn = Math.max(this.lastTurn, this.turn);
        this.step = null;
        this.lastStep = 0;
        this.calls.clear();
        break;
      case ev.Types.turnEnd:
        this.turn = null;
        this.step = null;
        this.calls.clear();
        break;
      case ev.Types.stepStart:
        this.step = (data as ev.StepData).step;
        this.lastStep = Math.max(this.lastStep, this.step);
        this.calls.clear();
        break;
      case ev.Types.stepEnd:
        this.step = null;
        this.calls.clear();
        break;
      case ev.Types.assistantMessage:
        for (const b of (data as ev.AssistantData).message.content) {
          if (b.type === "tool-call") this.calls.set(b.id, false);
        }
        break;
      case ev.Types.toolResult: {
        const id = (data as ev.ToolResultData).message.toolCallId;
        if (id !== undefined && this.calls.has(id)) this.calls.set(id, true);
        break;
      }
    }
  }

  /** clone returns an independent copy. */
  clone(): Loop {
    const l = new Loop();
    l.turn = this.turn;
    l.lastTurn = this.lastTurn;
    l.step = this.step;
    l.lastStep = this.lastStep;
    l.calls = new Map(this.calls);
    return l;
  }
}

/** The longest message id logbook takes, in bytes (docs/format.md, "Messages and content blocks"). */
const MAX_MESSAGE_ID_BYTES = 256;
/** The longest tool call id logbook takes, in bytes. */
const MAX_CALL_ID_BYTES = 128;

/** messageId is s when it is a valid message id, else "adk-" and 32 hex of its SHA-256. */
function messageId(s: string): string {
  const n = Buffer.byteLength(s, "utf8");
  return n > 0 && n <= MAX_MESSAGE_ID_BYTES ? s : "adk-" + createHash("sha256").update(s).digest("hex").slice(0, 32);
}

type Part = NonNullable<NonNullable<AdkEvent["content"]>["parts"]>[number];

function parts(e: AdkEvent): Part[] {
  return e.content?.parts ?? [];
}

/** The error a call gets when its ADK session moved on without a response for it. */
const UNANSWERED: ev.ToolFailure = { name: "AdkCallUnanswered", code: "TOOL_OUTCOME_UNKNOWN" };

/**
 * plan returns the typed events that record ADK event e after the loop
 * state l, and moves l past them. The rules:
 *
 * - content of role "user" without function responses (what the user
 *   said): the open turn is closed, a new turn starts with a user/message;
 * - content of role "model": a step (in the open turn, or a new one) with
 *   an assistant/message of the text, thought and function call parts, and
 *   a tool/call for each call; a reply without calls closes its step and
 *   its turn;
 * - function responses: a tool/result for each response to a call of the
 *   open step that has none yet; when every call has one, the step ends (and
 *   the turn too when ADK calls the event a final response);
 * - anything else (actions only, errors, responses to calls of an earlier
 *   step, other parts): no typed event; the ADK record alone keeps it.
 *
 * Calls left unanswered when a new step or turn must start get an error
 * tool/result (TOOL_OUTCOME_UNKNOWN), as the protocol requires every call
 * of a step to be answered before it ends.
 */
export function plan(l: Loop, e: AdkEvent, final: boolean): Input<unknown>[] {
  const out: Input<unknown>[] = [];
  const push = (i: Input<unknown>) => {
    out.push(i);
    l.fold(i.type, i.data);
  };
  const closeStep = () => {
    if (l.turn === null || l.step === null) return;
    for (const [id, answered] of l.calls) {
      if (answered) continue;
      push(ev.tool(l.turn, l.step, {
        id: messageId(`${e.id}/unanswered/${id}`),
        callID: id,
        content: [ev.text("The ADK session moved on before a response to this call was recorded; its outcome is unknown.")],
        failure: UNANSWERED,
      }));
    }
    push(ev.stepEnd(l.turn, l.step));
  };
  const closeTurn = () => {
    closeStep();
    if (l.turn !== null) push(ev.turnEnd(l.turn, ev.completed()));
  };
  const ps = parts(e);
  const responses = ps.filter((p) => p.functionResponse !== undefined);
  const role = e.content?.role ?? (e.author === "user" ? "user" : "model");
  if (ps.length === 0) return out;
  if (responses.length > 0) {
    if (l.turn === null || l.step === null) return out;
    for (const p of responses) {
      const r = p.functionResponse!;
      if (r.id === undefined || l.calls.get(r.id) !== false) continue;
      push(ev.tool(l.turn, l.step, { id: messageId(`${e.id}/${r.id}`), callID: r.id, content: [ev.text(json(r.response ?? {}, "functionResponse.response"))] }));
    }
    if ([...l.calls.values()].every(Boolean)) {
      closeStep();
      if (final) closeTurn();
    }
    return out;
  }
  if (role === "user") {
    closeTurn();
    push(ev.turnStart(l.lastTurn + 1));
    push(ev.user(messageId(e.id), e.author === "user" ? "prompt" : "context", ...texts(ps)));
    return out;
  }
  if (role !== "model") return out;
  closeStep();
  if (l.turn === null) push(ev.turnStart(l.lastTurn + 1));
  const turn = l.turn!;
  push(ev.stepStart(turn, l.lastStep + 1));
  const step = l.step!;
  const content: ev.Block[] = [];
  const calls: { id: string; name: string; args: string }[] = [];
  for (const p of ps) {
    if (p.text !== undefined && p.thought === true) content.push(ev.reasoning(p.text, p.thoughtSignature ?? ""));
    else if (p.text !== undefined) content.push(ev.text(p.text));
    const c = p.functionCall;
    if (c === undefined || !validCallId(c.id) || !c.name || calls.some((x) => x.id === c.id)) continue;
    const call = { id: c.id, name: c.name, args: json(c.args ?? {}, "functionCall.args") };
    calls.push(call);
    content.push(ev.toolCallBlock(call.id, call.name, call.args));
  }
  push(ev.assistant(turn, step, { id: messageId(e.id), model: { provider: "google-adk", name: e.modelVersion || e.author || "unknown" }, content, ...usage(e) }));
  for (const c of calls) push(ev.toolCall(turn, step, c.id, c.name, c.args));
  if (calls.length === 0) closeTurn();
  return out;
}

function validCallId(id: string | undefined): id is string {
  if (id === undefined) return false;
  const n = Buffer.byteLength(id, "utf8");
  return n > 0 && n <= MAX_CALL_ID_BYTES;
}

function texts(ps: Part[]): ev.Block[] {
  return ps.filter((p) => p.text !== undefined && p.thought !== true).map((p) => ev.text(p.text!));
}

function json(v: unknown, what: string): string {
  return encodeJSON(pack(v, what).json);
}

function usage(e: AdkEvent): { usage?: ev.Usage } {
  const u = e.usageMetadata;
  if (u === undefined) return {};
  const input = u.promptTokenCount ?? 0;
  const output = u.candidatesTokenCount ?? 0;
  if (!Number.isSafeInteger(input) || !Number.isSafeInteger(output) || input < 0 || output < 0) return {};
  const cacheRead = u.cachedContentTokenCount ?? 0;
  return { usage: Number.isSafeInteger(cacheRead) && cacheRead > 0 ? { input, output, cacheRead } : { input, output } };
}
