// The write controls of the page, drawn only for a credential whose role
// may use them (access.ts): a new session on the Sessions view; fork,
// flush, release, hold, release-hold and delete on a session's view. Each
// control carries data-action, the operation it calls.

import { allows, type Action, type Whoami } from "./access";
import { Problem, send, sessionHash, sessionURL, type SessionHeader } from "./api";
import { h } from "./dom";

/** A button for action a, or null when role may not use it. */
function control(who: Whoami, a: Action, label: string, title: string, run: () => Promise<void>, status: HTMLElement): HTMLButtonElement | null {
  if (!allows(who.role, a)) return null;
  const b = h("button", { type: "button", "data-action": a, title }, label);
  b.addEventListener("click", () => {
    b.disabled = true;
    status.textContent = `${label}…`;
    status.classList.remove("error");
    run().then(
      () => {
        b.disabled = false;
      },
      (err) => {
        b.disabled = false;
        status.textContent = `${label}: ${err instanceof Problem ? err.message : String(err)}`;
        status.classList.add("error");
      },
    );
  });
  return b;
}

/** The bar of controls, or null when none is left (a read credential). */
function bar(label: string, status: HTMLElement, buttons: (HTMLButtonElement | null)[]): HTMLElement | null {
  const shown = buttons.filter((b): b is HTMLButtonElement => b !== null);
  if (shown.length === 0) return null;
  return h("div", { class: "actions", role: "toolbar", "aria-label": label }, ...shown, " ", status);
}

/** The Sessions view's controls: a new session (write). */
export function listActions(who: Whoami): HTMLElement | null {
  const status = h("span", { class: "muted", role: "status" });
  return bar("Session list actions", status, [
    control(who, "create", "New session", "create an empty session (POST /v1/sessions)", async () => {
      const header = await send<SessionHeader>("POST", "v1/sessions", {});
      if (header) location.hash = sessionHash(header.id);
    }, status),
  ]);
}

/**
 * A session's controls: fork at the picked seq, flush and release (write),
 * hold, release-hold and delete (admin). Deleting asks first, then goes
 * back to the Sessions view.
 */
export function sessionActions(who: Whoami, id: string, picked: () => number): HTMLElement | null {
  const status = h("span", { class: "muted", role: "status" });
  const done = (what: string) => () => {
    status.textContent = what;
  };
  const reason = () => prompt("Reason (kept in the audit record):") ?? undefined;
  return bar("Session actions", status, [
    control(who, "fork", "Fork here", "a new live session holding the events up to the picked seq (POST …/fork)", async () => {
      const child = await send<SessionHeader>("POST", sessionURL(id, "/fork"), { at: picked() });
      if (child) location.hash = sessionHash(child.id);
    }, status),
    control(who, "flush", "Flush", "make the live session durable on every backend (POST …/flush)", () => send("POST", sessionURL(id, "/flush")).then(done("Flushed.")), status),
    control(who, "release", "Release", "flush and close the live session (POST …/release)", () => send("POST", sessionURL(id, "/release")).then(done("Released.")), status),
    control(who, "hold", "Hold", "put a legal hold on the session: delete and retention refuse it (POST …/hold)", () => send("POST", sessionURL(id, "/hold"), { reason: reason() }).then(done("Held.")), status),
    control(who, "release-hold", "Release hold", "lift the legal hold (POST …/release-hold)", () => send("POST", sessionURL(id, "/release-hold"), { reason: reason() }).then(done("Hold released.")), status),
    control(who, "delete", "Delete", "delete the stored session from every backend (DELETE)", async () => {
      if (!confirm(`Delete session ${id} from every backend?`)) {
        status.textContent = "";
        return;
      }
      const r = reason();
      await send("DELETE", sessionURL(id, "", r ? { reason: r } : {}));
      location.hash = "#/";
    }, status),
  ]);
}
