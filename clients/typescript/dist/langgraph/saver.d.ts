import { BaseCheckpointSaver, type ChannelVersions, type Checkpoint, type CheckpointListOptions, type CheckpointMetadata, type CheckpointTuple, type PendingWrite, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Client } from "../client.js";
/** The label naming the framework of a session the saver made. */
export declare const FRAMEWORK = "langgraph";
/** The longest thread id the saver takes: a label value's limit in UTF-8 bytes (docs/format.md). */
export declare const MAX_THREAD_ID_BYTES = 1024;
/** Options of a LogbookSaver. */
export interface LogbookSaverOptions {
    /** The client of the logbook serve that keeps the threads. */
    client: Client;
    /**
     * Keeps the threads of several applications apart on one server: the
     * session id is made from "<scope>/<thread id>", the header gets the
     * label "scope", and list without a thread id finds only this scope's
     * threads. Default: none.
     */
    scope?: string;
    /** Make every put and putWrites durable on every backend before it returns. */
    flush?: boolean;
    /** Also append the messages of the root namespace's "messages" channel
     * as typed events (user/message, assistant/message, tool/result);
     * default true. */
    messages?: boolean;
    /** The serializer of checkpoints and writes; default LangGraph's JsonPlusSerializer. */
    serde?: SerializerProtocol;
}
/**
 * LogbookSaver is a LangGraph BaseCheckpointSaver backed by logbook: each
 * thread is one strict session whose id is sessionIdFor of the thread id
 * (with the scope in front), labelled framework "langgraph" and key the
 * thread id. A put appends one langgraph/checkpoint event (the checkpoint,
 * its metadata and the values of the channels it changed), a putWrites one
 * langgraph/writes event; both are log-only types logbook keeps byte for
 * byte and never interprets, appended under an operation id made from
 * their content, so a retried put or putWrites is stored once. A put of
 * the root namespace also appends the new messages of its "messages"
 * channel as typed events, in the same atomic operation. deleteThread
 * deletes the session, which a legal hold refuses (SESSION_HELD).
 */
export declare class LogbookSaver extends BaseCheckpointSaver {
    #private;
    /** The client of the server that keeps the threads. */
    readonly client: Client;
    /** The scope of the saver's threads (see LogbookSaverOptions.scope). */
    readonly scope: string | undefined;
    /** Whether every put and putWrites is made durable before it returns. */
    readonly flush: boolean;
    /** Whether puts append the messages channel's new messages as typed events. */
    readonly mirrorMessages: boolean;
    constructor(o: LogbookSaverOptions);
    /** sessionId returns the id of the session that keeps threadId. */
    sessionId(threadId: string): string;
    /** getTuple returns the checkpoint config names (its latest when the
     * config has no checkpoint_id), undefined when there is none. */
    getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined>;
    /** list yields the checkpoints of config's thread (every thread of the
     * scope when it names none) and namespace (every one when it names
     * none), newest first within a namespace: only those before
     * options.before, whose metadata has every member of options.filter,
     * at most options.limit. */
    list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple>;
    /** put stores checkpoint (with the values of the channels in
     * newVersions) as the child of config's checkpoint and returns its config. */
    put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig>;
    /** putWrites stores the writes of task taskId against config's checkpoint. */
    putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void>;
    /** deleteThread deletes the session of threadId (releasing it first when
     * the server holds it live). A session under a legal hold is not
     * deleted: the LogbookError SESSION_HELD is thrown. A thread that was
     * never stored is nothing to delete. */
    deleteThread(threadId: string): Promise<void>;
    /** threadIds returns the ids of the threads of the saver's scope stored
     * on the server (found by the labels of their sessions). */
    threadIds(): Promise<string[]>;
}
