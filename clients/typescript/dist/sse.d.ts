/** One dispatched server-sent event. */
export interface ServerEvent {
    id: string | undefined;
    data: string;
}
/** readEvents yields the events of an event-stream body as they arrive,
 * calling onData whenever bytes arrive (heartbeats included). It ends when
 * the body ends; a broken connection rejects. */
export declare function readEvents(body: ReadableStream<Uint8Array>, onData?: () => void): AsyncGenerator<ServerEvent>;
