// The @a2a-js/sdk 1.x client side of the interop suite (tests/interop). Our own code.
//
//   node client.mjs --card-url URL --transport JSONRPC|HTTP+JSON --text T --id ID
//                   [--origin FROM=TO]
//
// Fetches the card at --card-url, keeps only the interfaces of --transport (so the SDK's
// ClientFactory must pick that binding), optionally moves interface URLs from origin FROM
// to origin TO (to talk to an agent directly although its card names the proxy), then
// makes one sendMessage and one sendMessageStream call with message id ID.
// Prints one JSON object: {"card": <card as fetched>, "interface": <url used>,
// "send": <result>, "stream": [<event>...]} with the SDK-chosen task and context ids
// replaced by "<task>"/"<context>", so two runs compare equal when the agent behaved alike.
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { AgentCard, Message, SendMessageRequest, StreamResponse, Task } from '@a2a-js/sdk';

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const name of ['card-url', 'transport', 'text', 'id']) {
    if (!args[name]) throw new Error(`--${name} is required`);
  }
  return args;
}

function scrub(value, ids) {
  const text = JSON.stringify(value, (key, v) => {
    if (typeof v === 'string' && ids.has(v)) return ids.get(v);
    return v;
  });
  return JSON.parse(text);
}

const args = parseArgs(process.argv.slice(2));
const response = await fetch(args['card-url'], { headers: { 'A2A-Version': '1.0' } });
if (!response.ok) throw new Error(`card: HTTP ${response.status}`);
const fetched = await response.json();
const json = structuredClone(fetched);
json.supportedInterfaces = json.supportedInterfaces
  .filter((i) => i.protocolBinding === args.transport)
  .map((i) => {
    if (!args.origin) return i;
    const [from, to] = args.origin.split('=');
    return i.url.startsWith(from) ? { ...i, url: to + i.url.slice(from.length) } : i;
  });
const card = AgentCard.fromJSON(json);

const factory = new ClientFactory({
  ...ClientFactoryOptions.default,
  transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
});
const client = await factory.createFromAgentCard(card);

const request = (suffix) => SendMessageRequest.fromJSON({
  message: {
    messageId: `${args.id}-${suffix}`,
    role: 'ROLE_USER',
    parts: [{ text: args.text }],
  },
});

const ids = new Map();
const note = (taskId, contextId) => {
  if (taskId && !ids.has(taskId)) ids.set(taskId, `<task${ids.size}>`);
  if (contextId && !ids.has(contextId)) ids.set(contextId, `<context${ids.size}>`);
};

const sent = await client.sendMessage(request('send'));
const sentJson = 'status' in sent ? { task: Task.toJSON(sent) } : { message: Message.toJSON(sent) };
const first = sentJson.task ?? sentJson.message;
note(first.id ?? first.taskId, first.contextId);

const events = [];
for await (const event of client.sendMessageStream(request('stream'))) {
  const json = StreamResponse.toJSON(event);
  const body = json.task ?? json.statusUpdate ?? json.artifactUpdate ?? json.message ?? {};
  note(body.id ?? body.taskId, body.contextId);
  events.push(json);
}

const out = {
  card: fetched,
  interface: json.supportedInterfaces[0]?.url,
  send: scrub(sentJson, ids),
  stream: scrub(events, ids),
};
process.stdout.write(JSON.stringify(out) + '\n');
