// Stock @a2a-js/sdk 1.x agents for the stock-agent matrix (tests/interop/test_stock_matrix.py).
// Our own code, written from the SDK's README and samples as a user would: a typed
// AgentCard (every member its .d.ts requires, so an unsigned card is served with
// `"signatures": []`, `"securitySchemes": {}`, `"securityRequirements": []`), a
// DefaultRequestHandler, the express handlers. Nothing here knows the interview but the
// cards that declare it (the interview is served by `a2a-interview proxy` in front).
//
//   node stock_agents.mjs --config CONFIG.json
//
// CONFIG.json: {"agents": [{"variant": V, "port": N, "public": URL, ...}, ...]}, one
// express app per item, each on its own loopback port:
//   unsigned      undeclared card naming its own origin, unsigned
//   signed        the same, signed by the SDK's generateAgentCardSignature as its
//                 DefaultRequestHandler argument, `jku` naming the JWKS it serves at
//                 /.well-known/jwks.json (item: "key" a private JWK file, "kid")
//   legacy        undeclared, with a 0.3 JSONRPC interface and legacyCompat on every
//                 handler (the SDK's v0.3 compatibility layer)
//   extended      undeclared, capabilities.extendedAgentCard, an extended card with one
//                 more skill for an authenticated user (Authorization: Bearer <item.token>)
//   signed-extended  both: signed as `signed`, extended as `extended` (the SDK signs the
//                 extended card it returns with the same signer)
//   grpc-only     declares the interview; its one interface is GRPC (nothing speaks gRPC)
//   grpc-jsonrpc  declares the interview; a GRPC interface and the JSON-RPC one, both
//                 naming item.public (the proxy's public origin)
// Prints "listening <port>" per app once it accepts connections.
import { readFileSync } from 'node:fs';
import express from 'express';
import { AGENT_CARD_PATH, generateAgentCardSignature, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  UnauthenticatedUser,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const INTERVIEW = 'https://agentsow.com/extensions/a2a-interview/v1';

function skill(id, name, description) {
  return {
    id, name, description, tags: [id], examples: [], inputModes: [], outputModes: [],
    securityRequirements: [],
  };
}

function typedCard(item, origin) {
  // As the SDK's samples build it: every member the AgentCard type requires.
  const at = item.public ?? origin;
  const declare = item.variant === 'grpc-only' || item.variant === 'grpc-jsonrpc';
  let interfaces = [
    { url: `${at}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    { url: `${at}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
  ];
  if (item.variant === 'legacy') {
    interfaces.push({ url: `${at}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' });
  }
  const grpc = { url: item.grpc ?? '127.0.0.1:50051', protocolBinding: 'GRPC', tenant: '', protocolVersion: '1.0' };
  if (item.variant === 'grpc-only') interfaces = [grpc];
  if (item.variant === 'grpc-jsonrpc') interfaces = [grpc, interfaces[0]];
  return {
    name: `JS ${item.variant}`,
    description: 'A stock @a2a-js/sdk agent that says back what it is told',
    supportedInterfaces: interfaces,
    provider: { url: 'https://stock.example', organization: 'Stock Example' },
    version: '1.0.0',
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extensions: declare
        ? [{ uri: INTERVIEW, description: 'The five questions', required: false, params: undefined }]
        : [],
      extendedAgentCard: item.variant.endsWith('extended') ? true : undefined,
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [skill('echo', 'Echo', 'Says it back')],
    signatures: [],
  };
}

class EchoExecutor {
  async execute(context, bus) {
    const { taskId, contextId } = context;
    const said = (context.userMessage?.parts ?? [])
      .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
      .join('');
    bus.publish(AgentEvent.message({
      messageId: `${context.userMessage?.messageId ?? 'm'}-reply`,
      contextId,
      taskId: '',
      role: Role.ROLE_AGENT,
      parts: [{ content: { $case: 'text', value: `echo: ${said}` }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    }));
    bus.finished();
    void taskId;
    void TaskState;
  }

  async cancelTask(taskId, bus) {
    bus.finished();
  }
}

class BearerUser {
  constructor(name) { this.name = name; }
  get isAuthenticated() { return true; }
  get userName() { return this.name; }
}

function bearerUserBuilder(token) {
  return async (req) => (req.headers.authorization === `Bearer ${token}`
    ? new BearerUser('bearer')
    : new UnauthenticatedUser());
}

function app(item) {
  const origin = `http://127.0.0.1:${item.port}`;
  const card = typedCard(item, origin);
  let extended;
  if (item.variant.endsWith('extended')) {
    extended = { ...card, skills: [...card.skills, skill('audit', 'Audit', 'For signed-in callers')] };
  }
  let signer;
  const served = express();
  if (item.variant.startsWith('signed')) {
    const jwk = JSON.parse(readFileSync(item.key, 'utf8'));
    const jku = `${origin}/.well-known/jwks.json`;
    signer = generateAgentCardSignature(jwk, { alg: 'ES256', kid: item.kid, typ: 'JOSE', jku });
    const { d: _private, ...publicJwk } = jwk;
    served.get('/.well-known/jwks.json', (req, res) => res.json({ keys: [publicJwk] }));
  }
  const requestHandler = new DefaultRequestHandler(
    card, new InMemoryTaskStore(), new EchoExecutor(), undefined, undefined, undefined,
    extended, signer,
  );
  const legacyCompat = item.variant === 'legacy' ? { enabled: true } : undefined;
  const userBuilder = item.token ? bearerUserBuilder(item.token) : UserBuilder.noAuthentication;
  served.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler, legacyCompat }));
  served.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler, userBuilder, legacyCompat }));
  served.use('/a2a/rest', restHandler({ requestHandler, userBuilder, legacyCompat }));
  return served;
}

const at = process.argv.indexOf('--config');
if (at < 0 || !process.argv[at + 1]) throw new Error('--config CONFIG.json is required');
const config = JSON.parse(readFileSync(process.argv[at + 1], 'utf8'));
const servers = config.agents.map((item) => {
  const server = app(item).listen(item.port, '127.0.0.1', () => {
    process.stdout.write(`listening ${item.port}\n`);
  });
  return server;
});
const stop = () => {
  let open = servers.length;
  for (const server of servers) server.close(() => { open -= 1; if (open === 0) process.exit(0); });
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
