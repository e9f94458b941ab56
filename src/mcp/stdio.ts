import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createMcpServer } from './server.js';
import type { ServerRuntime } from './server.js';

/**
 * Serves both protocol revisions over stdio: the SDK picks the era from the opening exchange
 * and asks the factory for one server per connection.
 */
export function serveOverStdio(runtime: ServerRuntime, onClose: () => void): void {
  serveStdio(
    () => {
      const server = createMcpServer(runtime);
      const prev = server.server.onclose;
      server.server.onclose = () => {
        prev?.();
        onClose();
      };
      return server;
    },
    { onerror: (e) => runtime.log.warn('stdio transport error', { error: String(e) }) },
  );
}
