package compaction

// DefaultInstruction is logbook's summary instruction (docs/compaction.md), sent to
// the summarizer as the final user message after the region's messages. It
// asks for a dense Markdown summary with one section per kind of state the
// model needs to continue, and forbids tool calls and preambles. Covered by
// a golden test: changing it changes what every summarizer is asked.
const DefaultInstruction = `The conversation above is being compacted: it will be replaced by your summary, and the work will continue from the summary alone. Write a dense, factual Markdown summary of it with exactly these sections:

## Goals and constraints
What the user asked for, in their own words where it matters, and every requirement, preference and constraint they stated.

## Decisions and key technical concepts
Decisions made and why, approaches rejected and why, and the technical concepts, APIs, commands and conventions the work relies on.

## Files and artifacts
Every file, directory, URL and other artifact read, created or changed, with what was done to it and the exact names, paths, signatures and values that later work needs.

## Errors and resolutions
Every error met, with its exact message where useful, its cause, and how it was resolved or why it is still open.

## Open tasks
Everything requested or promised that is not yet done.

## Current work
The state of the work in progress at the end of the conversation: what was being done, how far it got, and what is known to work or not.

## Next step
The immediate next action, consistent with the most recent request; quote the latest instruction if the step depends on it.

## Other context
Anything else needed to continue without asking again: names, identifiers, numbers, environment details, the user's tone and preferences.

Be specific and complete; prefer exact identifiers and values to descriptions. Write "None." under a section with nothing to report. Do not call any tools. Do not add a preamble, a closing remark or any text outside these sections: start directly with the first heading.`

// CheckpointPreamble is the preamble P of the compaction checkpoint message
// (docs/compaction.md step 6): it says that earlier conversation was condensed, that
// the summary is settled background not to be restated or acknowledged, and
// that work continues from the following messages. The checkpoint's text is
// P + "\n\n<conversation-summary>\n" + summary + "\n</conversation-summary>".
const CheckpointPreamble = `Checkpoint: earlier parts of this conversation were condensed into the summary below to save context. Treat it as settled background, do not repeat or acknowledge it, and continue the task from the messages that follow.`
