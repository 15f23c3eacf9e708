import { isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage, type MessageExtraInfo, type RequestId, type Transport, type TransportSendOptions } from '@modelcontextprotocol/server';

/**
 * A transport that fills in the `instructions` of the initialize result when it is sent, not when the
 * gateway was built: the routed servers' own instructions are known only once they have started, which
 * is usually after the gateway was created (`serve` starts them once its client is connected). Every
 * other message passes through untouched; the SDK Server sees an ordinary transport.
 */
export class InstructionsTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private readonly initializeIds = new Set<RequestId>();

  constructor(
    private readonly inner: Transport,
    private readonly instructions: () => Promise<string>,
  ) {
    // Handlers the owner set before (the HTTP gateway's onclose) keep running, before the Server's.
    const { onclose, onerror } = inner;
    inner.onclose = () => {
      onclose?.();
      this.onclose?.();
    };
    inner.onerror = (error) => {
      onerror?.(error);
      this.onerror?.(error);
    };
    inner.onmessage = (message, extra) => {
      if (isJSONRPCRequest(message) && message.method === 'initialize') this.initializeIds.add(message.id);
      this.onmessage?.(message, extra);
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  /** The HTTP transport checks each request's MCP-Protocol-Version header against these. */
  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isJSONRPCResultResponse(message) && this.initializeIds.delete(message.id)) {
      // Without its instructions the answer still goes out: initialize must never hang on them.
      const instructions = await this.instructions().catch(() => undefined);
      if (instructions !== undefined) return this.inner.send({ ...message, result: { ...message.result, instructions } }, options);
    }
    return this.inner.send(message, options);
  }
}
