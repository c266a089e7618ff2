// What the reader's credential may do: GET /v1/whoami, asked once per
// token, and the role each of the page's write controls needs. The server
// enforces every role itself (403 PERMISSION_DENIED); the page only leaves
// out the controls the credential could not use.

import { getJSON, Problem } from "./api";

/** The roles of docs/operations.md, weakest first. */
export const roles = ["read", "write", "admin", "operator"] as const;

/** A credential's role. */
export type Role = (typeof roles)[number];

/** GET /v1/whoami: the credential's name, the tenant the call ran on (an operator's picked one, else "default") and its role. */
export interface Whoami {
  name: string;
  tenant: string;
  role: string;
}

/** The page's write controls, each named after the operation it calls. */
export type Action = "create" | "fork" | "flush" | "release" | "hold" | "release-hold" | "delete";

/** The weakest role that may use each control: write for what adds to a log, admin for what removes or freezes one. */
const needs: Record<Action, Role> = {
  create: "write",
  fork: "write",
  flush: "write",
  release: "write",
  hold: "admin",
  "release-hold": "admin",
  delete: "admin",
};

/** The rank of a role; −1 for a role this page does not know, which may do nothing but read. */
function rank(role: string): number {
  return roles.indexOf(role as Role);
}

/** Whether a credential of role may use control a. */
export function allows(role: string, a: Action): boolean {
  return rank(role) >= rank(needs[a]);
}

/** Whether a credential of role addresses other tenants (?tenant=): an operator only. */
export function picksTenant(role: string): boolean {
  return role === "operator";
}

/**
 * What a credential that could not be asked may do: read only, so a page
 * whose whoami failed shows no write control (the server would refuse one
 * it may not use anyway).
 */
export const readOnly: Whoami = { name: "", tenant: "", role: "read" };

let asked: Promise<Whoami> | undefined;

/**
 * The credential of this tab, asked once (again after forget). A server
 * without the route (one older than roles) has one credential that may do
 * everything, so it answers as an operator of the implicit tenant; any
 * other failure leaves the page read-only.
 */
export function whoami(): Promise<Whoami> {
  asked ??= getJSON<Whoami>("v1/whoami").catch((err) => {
    if (err instanceof Problem && (err.code === "ROUTE_NOT_FOUND" || (err.status === 404 && err.code !== "SESSION_NOT_FOUND"))) {
      return { name: "", tenant: "default", role: "operator" };
    }
    asked = undefined; // asked again by the next view (after a token, say)
    return readOnly;
  });
  return asked;
}

/** Forgets the answer of whoami (the token changed). */
export function forget(): void {
  asked = undefined;
}
