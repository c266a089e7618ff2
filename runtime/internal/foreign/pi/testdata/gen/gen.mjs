// Writes pi v3 session files with pi's SessionManager, offline: every
// message is built here and appended as pi's agent loop would persist it;
// no model is called. usage: node gen.mjs OUTDIR (see ../SOURCE.md).
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { mkdtempSync, readdirSync, copyFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const out = process.argv[2];
if (!out) throw new Error("usage: node gen.mjs OUTDIR");
const cwd = "/home/dev/project";
let clock = Date.parse("2026-12-01T09:00:00.000Z");
const now = () => (clock += 1000);

const usage = (input, output) => ({
  input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
const user = (text) => ({ role: "user", content: text, timestamp: now() });
const userBlocks = (content) => ({ role: "user", content, timestamp: now() });
const assistant = (content, stopReason, model = "claude-sonnet-4-5", provider = "anthropic") => ({
  role: "assistant", content, api: "anthropic-messages", provider, model,
  usage: usage(1200, 80), stopReason, timestamp: now(),
});
const said = (text, stop = "stop", model, provider) => assistant([{ type: "text", text }], stop, model, provider);
const call = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });
const result = (toolCallId, toolName, text, isError = false) => ({
  role: "toolResult", toolCallId, toolName, content: [{ type: "text", text }], isError, timestamp: now(),
});
const system = (content, extra = {}) => ({ role: "system", content, ...extra, timestamp: now() });
const readTool = {
  name: "read", description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};
const bashTool = {
  name: "bash", description: "Run a shell command",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
};

function session(name, id, build) {
  const dir = mkdtempSync(join(tmpdir(), "pigen-"));
  const sm = SessionManager.create(cwd, dir, { id });
  build(sm);
  const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
  if (files.length !== 1) throw new Error(`${name}: ${files.length} session files`);
  copyFileSync(join(dir, files[0]), join(out, name));
  rmSync(dir, { recursive: true });
}

// basic-v3: a system prompt with tools, model and thinking changes, a tool
// round trip with thinking, an error result, an image prompt, a later
// system message, and the entries that are not model context.
session("basic-v3.jsonl", "019ae001-0000-7000-8000-000000000001", (sm) => {
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  sm.appendThinkingLevelChange("medium");
  sm.appendMessage(system("You are pi, a coding agent.", { sections: { env: "<env>cwd=/home/dev/project</env>" }, toolsAdded: [readTool, bashTool] }));
  sm.appendMessage(user("What does go.mod say?"));
  sm.appendMessage(assistant([
    { type: "thinking", thinking: "Read go.mod first.", thinkingSignature: "sig-1" },
    { type: "text", text: "Let me look." },
    call("toolu_01", "read", { path: "go.mod" }),
  ], "toolUse"));
  sm.appendMessage(result("toolu_01", "read", "module example.com/demo\n\ngo 1.24\n"));
  sm.appendMessage(said("It declares module example.com/demo for Go 1.24."));
  sm.appendSessionInfo("go.mod tour");
  sm.appendMessage(user("Run the tests and the linter."));
  sm.appendMessage(assistant([
    call("toolu_02", "bash", { command: "go test ./..." }),
    call("toolu_03", "bash", { command: "golangci-lint run" }),
  ], "toolUse"));
  sm.appendMessage(result("toolu_02", "bash", "ok  example.com/demo 0.01s"));
  sm.appendMessage(result("toolu_03", "bash", "golangci-lint: command not found", true));
  sm.appendMessage(said("Tests pass; the linter is not installed."));
  const labelled = sm.getLeafId();
  sm.appendLabelChange(labelled, "tests-green");
  sm.appendCustomEntry("todo-extension", { items: ["install linter"] });
  sm.appendModelChange("openai", "gpt-5");
  sm.appendThinkingLevelChange("high");
  sm.appendMessage(system("", { sections: { env: "<env>cwd=/home/dev/project branch=main</env>" } }));
  sm.appendMessage(userBlocks([{ type: "text", text: "What is in this screenshot?" }, { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" }]));
  sm.appendMessage(said("A terminal showing a passing test run.", "stop", "gpt-5", "openai"));
  sm.appendCustomMessageEntry("reminder", "Remember to install the linter.", true, { source: "todo-extension" });
  sm.appendUsage("cache_warm", "openai", "gpt-5", usage(300, 0));
  sm.appendMessage(user("Thanks, stop here."));
  sm.appendMessage(assistant([{ type: "text", text: "Stopp" }], "aborted", "gpt-5", "openai"));
});

// branches-v3: a conversation, a tree switch to an earlier entry, and a
// switch with a branch summary.
session("branches-v3.jsonl", "019ae001-0000-7000-8000-000000000002", (sm) => {
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  sm.appendMessage(user("Name a sorting algorithm."));
  const first = sm.appendMessage(said("Quicksort."));
  sm.appendMessage(user("Its worst case?"));
  sm.appendMessage(said("O(n^2) on already sorted input with a naive pivot."));
  sm.branch(first);
  sm.appendMessage(user("Its average case?"));
  const avg = sm.appendMessage(said("O(n log n)."));
  sm.appendMessage(user("Show it in Go."));
  sm.appendMessage(said("func quicksort(a []int) { /* ... */ }"));
  sm.branchWithSummary(avg, "The user asked for a Go quicksort; a stub was shown.");
  sm.appendMessage(user("Compare it with mergesort instead."));
  sm.appendMessage(said("Mergesort is stable and always O(n log n), but needs O(n) extra space."));
});

// compaction-v3: tool work, a context edit of a tool result and an
// omission, two compactions (the second keeping entries after the first).
session("compaction-v3.jsonl", "019ae001-0000-7000-8000-000000000003", (sm) => {
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  sm.appendMessage(system("You are pi, a coding agent.", { toolsAdded: [bashTool] }));
  sm.appendMessage(user("List the repository."));
  sm.appendMessage(assistant([call("toolu_11", "bash", { command: "ls -R" })], "toolUse"));
  const big = sm.appendMessage(result("toolu_11", "bash", "a.go\nb.go\n" + "vendor/x.go\n".repeat(40)));
  sm.appendMessage(said("There are two Go files and a vendor tree."));
  sm.appendContextEdit(big, { content: "a.go\nb.go\n[vendor listing removed]" });
  sm.appendMessage(user("Which file is larger?"));
  const chatter = sm.appendMessage(said("I will check."));
  sm.appendContextEdit(chatter, null);
  sm.appendMessage(assistant([call("toolu_12", "bash", { command: "wc -c a.go b.go" })], "toolUse"));
  sm.appendMessage(result("toolu_12", "bash", "120 a.go\n340 b.go"));
  sm.appendMessage(said("b.go is larger (340 bytes)."));
  const kept = sm.appendMessage(user("Summarise b.go."));
  sm.appendMessage(said("b.go holds the HTTP handlers."));
  sm.appendCompaction("The user listed the repository (a.go, b.go, vendor) and found b.go larger.", kept, 5200, { files: ["a.go", "b.go"] }, false, usage(5200, 150));
  sm.appendMessage(user("Add a test for the handlers."));
  sm.appendMessage(assistant([call("toolu_13", "bash", { command: "touch b_test.go" })], "toolUse"));
  sm.appendMessage(result("toolu_13", "bash", ""));
  const kept2 = sm.appendMessage(said("Created b_test.go."));
  sm.appendCompaction("Listed the repository, found b.go (HTTP handlers) larger, created b_test.go.", kept2, 3100);
  sm.appendMessage(user("Run it."));
  sm.appendMessage(said("It passes.", "stop"));
});
