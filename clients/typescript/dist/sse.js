// A reader of Server-Sent Events (the text/event-stream format of the HTML
// standard) over a fetch body: the fields a logbook stream uses (id, data;
// comments are heartbeats). Hand-written because Node 20 has no
// EventSource and the format is a few lines: an npm dependency would cost
// more than it saves.
/** readEvents yields the events of an event-stream body as they arrive,
 * calling onData whenever bytes arrive (heartbeats included). It ends when
 * the body ends; a broken connection rejects. */
export async function* readEvents(body, onData) {
    const decoder = new TextDecoder();
    const reader = body.getReader();
    let buf = "";
    let id;
    let data = [];
    try {
        for (;;) {
            const { value, done } = await reader.read();
            if (done)
                return;
            onData?.();
            buf += decoder.decode(value, { stream: true });
            for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
                let line = buf.slice(0, nl);
                buf = buf.slice(nl + 1);
                if (line.endsWith("\r"))
                    line = line.slice(0, -1);
                if (line === "") {
                    if (data.length > 0)
                        yield { id, data: data.join("\n") };
                    id = undefined;
                    data = [];
                    continue;
                }
                if (line.startsWith(":"))
                    continue; // a comment: the heartbeat
                const colon = line.indexOf(":");
                const field = colon < 0 ? line : line.slice(0, colon);
                let val = colon < 0 ? "" : line.slice(colon + 1);
                if (val.startsWith(" "))
                    val = val.slice(1);
                if (field === "id")
                    id = val;
                else if (field === "data")
                    data.push(val);
            }
        }
    }
    finally {
        await reader.cancel().catch(() => { });
    }
}
