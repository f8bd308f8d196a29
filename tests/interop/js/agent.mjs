// A stock @a2a-js/sdk 1.x agent for the interop suite (tests/interop). Our own code.
//
//   node agent.mjs --port N --card CARD.json [--key PRIVATE.jwk --kid KID --alg ES256]
//                  [--file /path=FILE ...] [--legacy on]
//
// Serves CARD.json (as authored, signed with the SDK's own generateAgentCardSignature when
// --key is given) at /.well-known/agent-card.json through the SDK's agentCardHandler, the
// JSON-RPC binding at /a2a/jsonrpc and the HTTP+JSON binding at /a2a/rest through the
// SDK's express handlers, and each --file at its path (a standing proposal the card's
// terms entry names). The executor is trivial and deterministic: every message becomes a
// task (id chosen by the SDK) that reports working, one artifact "echo: <text>" and
// completed; ids in the events are derived from the request so that direct and proxied
// runs can be compared. --legacy on turns on the SDK's v0.3 compatibility layer on every
// handler (legacyCompat): the card handler then serves a v0.3-shaped card to a request
// whose A2A-Version is 0.3 or absent, with `Vary: A2A-Version` (the card must list a 0.3
// JSONRPC interface). Prints "listening <port>" once it accepts connections.
import { readFileSync } from 'node:fs';
import express from 'express';
import { AGENT_CARD_PATH, generateAgentCardSignature, TaskState, Role } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import {
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
  UserBuilder,
} from '@a2a-js/sdk/server/express';

function parseArgs(argv) {
  const args = { files: [], alg: 'ES256' };
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`missing value for ${name}`);
    if (name === '--port') args.port = Number(value);
    else if (name === '--card') args.card = value;
    else if (name === '--key') args.key = value;
    else if (name === '--kid') args.kid = value;
    else if (name === '--alg') args.alg = value;
    else if (name === '--file') args.files.push(value);
    else if (name === '--legacy') args.legacy = value === 'on';
    else throw new Error(`unknown option ${name}`);
  }
  if (!Number.isInteger(args.port) || !args.card) throw new Error('--port and --card are required');
  return args;
}

function text(message) {
  return (message?.parts ?? [])
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .join('');
}

class EchoExecutor {
  async execute(context, bus) {
    const { taskId, contextId } = context;
    const said = text(context.userMessage);
    const base = context.userMessage?.messageId ?? 'm';
    if (!context.task) {
      bus.publish(AgentEvent.task({
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
        artifacts: [],
        history: [context.userMessage],
        metadata: undefined,
      }));
    }
    const status = (state) => AgentEvent.statusUpdate({
      taskId, contextId, status: { state, message: undefined, timestamp: undefined }, metadata: undefined,
    });
    bus.publish(status(TaskState.TASK_STATE_WORKING));
    bus.publish(AgentEvent.artifactUpdate({
      taskId,
      contextId,
      artifact: {
        artifactId: `${base}-reply`,
        name: 'reply',
        description: '',
        parts: [{ content: { $case: 'text', value: `echo: ${said}` }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
        metadata: undefined,
        extensions: [],
      },
      append: false,
      lastChunk: true,
      metadata: undefined,
    }));
    bus.publish(status(TaskState.TASK_STATE_COMPLETED));
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    bus.finished();
  }
}

const args = parseArgs(process.argv.slice(2));
let card = JSON.parse(readFileSync(args.card, 'utf8'));
if (args.key) {
  const jwk = JSON.parse(readFileSync(args.key, 'utf8'));
  const signer = generateAgentCardSignature(jwk, { alg: args.alg, kid: args.kid, typ: 'JOSE' });
  card = await signer(card);
}

const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new EchoExecutor());
const app = express();
for (const spec of args.files) {
  const at = spec.indexOf('=');
  const [path, file] = [spec.slice(0, at), spec.slice(at + 1)];
  const body = readFileSync(file);
  app.get(path, (req, res) => res.type('application/json').send(body));
}
const legacyCompat = args.legacy ? { enabled: true } : undefined;
const userBuilder = UserBuilder.noAuthentication;
app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler, legacyCompat }));
app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler, userBuilder, legacyCompat }));
app.use('/a2a/rest', restHandler({ requestHandler, userBuilder, legacyCompat }));

const server = app.listen(args.port, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
