// The viewer's entry point: routes by the URL fragment (#/ for the
// sessions, #/sessions/ID?seq=N for one session) and asks for the bearer
// token once when the server wants one; the header names the credential
// (GET /v1/whoami) and the tenant an operator picked (or the address's
// ?tenant= picked).

import "./style.css";
import { forget, whoami } from "./access";
import { setTenant, setToken, setUnauthorizedHandler, tenant, tenantPattern } from "./api";
import { h } from "./dom";
import { sessionView, type Opened } from "./session";
import { sessionsView } from "./sessions";

const root = document.getElementById("app")!;
let opened: Opened | undefined;

/** Names the credential in the page's header: name, tenant, role. */
function credential(): void {
  const el = document.getElementById("whoami");
  if (!el) return;
  void whoami().then((who) => {
    const t = tenant() || who.tenant || "default";
    el.textContent = `${who.name || "no credential"} · ${who.role} · tenant ${t}`;
    el.dataset.role = who.role;
    el.dataset.tenant = t;
  });
}

function route(): void {
  credential();
  opened?.close();
  opened = undefined;
  const m = /^#\/sessions\/([^?]+)(?:\?(.*))?$/.exec(location.hash);
  if (m) {
    const seq = new URLSearchParams(m[2] ?? "").get("seq");
    const id = decodeURIComponent(m[1]);
    document.title = `${id} · logbook`;
    opened = sessionView(root, id, seq !== null && /^\d+$/.test(seq) ? Number(seq) : undefined);
    return;
  }
  document.title = "Sessions · logbook";
  const stop = new AbortController();
  opened = { close: () => stop.abort() };
  void sessionsView(root, stop.signal);
}

// The token form: shown when a call answers 401, once per tab (the token
// stays in sessionStorage until the tab closes).
let asking = false;
setUnauthorizedHandler(() => {
  if (asking) return;
  asking = true;
  const input = h("input", { type: "password", id: "token", name: "token", autocomplete: "current-password", required: true });
  const dialog = h(
    "dialog",
    { class: "token", "aria-labelledby": "token-title" },
    h(
      "form",
      {
        method: "dialog",
        onsubmit: () => {
          setToken(input.value);
          forget();
          asking = false;
          dialog.remove();
          route();
        },
      },
      h("h2", { id: "token-title" }, "This server needs a token"),
      h("p", {}, "Paste a token (logbook token create), a JWT, or the token of its --token-file. It is kept for this tab only."),
      h("label", { for: "token" }, "Token "),
      input,
      " ",
      h("button", { type: "submit" }, "Open"),
    ),
  );
  document.body.append(dialog);
  dialog.showModal();
  input.focus();
});

/**
 * Picks the tenant a link names (?tenant=NAME, as `logbook view --tenant`
 * prints it) for this tab, as the operator's Tenant box does; a name that
 * breaks the tenant name rule is ignored. The parameter is then dropped
 * from the address, so a reload keeps a tenant picked later.
 */
function tenantFromLink(): void {
  const params = new URLSearchParams(location.search);
  const t = params.get("tenant");
  if (t === null) return;
  if (tenantPattern.test(t)) setTenant(t === "default" ? "" : t);
  params.delete("tenant");
  const q = params.toString();
  history.replaceState(null, "", `${location.pathname}${q ? `?${q}` : ""}${location.hash}`);
}

tenantFromLink();
window.addEventListener("hashchange", route);
route();
