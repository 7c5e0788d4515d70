// A small recapd client: opens a chat, publishes messages, adds a running
// recap and prints each injection it receives from Subscribe.
//
// Usage: node recap_client.js [HOST:PORT]   (default 127.0.0.1:50051)
// Exits 1 if what it receives is not what recapd promises.
'use strict';

const path = require('path');
const crypto = require('crypto');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_ROOT = path.join(__dirname, '..', '..', 'proto');
const definition = protoLoader.loadSync(path.join(PROTO_ROOT, 'recap/v1/recap.proto'), {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
});
const recap = grpc.loadPackageDefinition(definition).recap.v1;

function check(condition, what) {
  if (!condition) {
    console.error(`FAILED: ${what}`);
    process.exit(1);
  }
}

// Promise wrapper for a unary call.
function call(client, method, request) {
  return new Promise((resolve, reject) => {
    client[method](request, (error, response) => (error ? reject(error) : resolve(response)));
  });
}

async function main() {
  const addr = process.argv[2] || '127.0.0.1:50051';
  const chat = `node-example-${crypto.randomBytes(4).toString('hex')}`;
  const credentials = grpc.credentials.createInsecure();
  const events = new recap.EventService(addr, credentials);
  const memory = new recap.MemoryService(addr, credentials);
  const settings = new recap.SettingsService(addr, credentials);
  const injections = new recap.InjectionService(addr, credentials);

  // Refresh this chat at once after every message (the default waits 300 ms).
  await call(settings, 'UpdateSettings', { chat_id: chat, settings: { debounce_ms: 0 } });

  // Open the chat with its transcript: an immediate refresh (revision 1).
  const opened = await call(events, 'Publish', {
    event: {
      chat_id: chat,
      chat_changed: {
        messages: [
          { id: 'm1', name: 'Alice', text: 'Hi Bob!', is_user: true },
          { id: 'm2', name: 'Bob', text: 'Hello, Alice.' },
        ],
      },
    },
  });
  check(opened.revision === 1, `chat_changed gives revision 1, got ${opened.revision}`);

  // Subscribe: the current injection first, then one per refresh.
  const received = [];
  const stream = injections.Subscribe({ chat_ids: [chat], max_updates: 3 });
  const ended = new Promise((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  const first = new Promise((resolve) => {
    stream.on('data', (injection) => {
      received.push(injection);
      console.log(
        `revision ${injection.revision} trigger ${injection.trigger} ` +
          `position ${injection.position} tokens ${injection.token_count}: ${JSON.stringify(injection.text)}`,
      );
      if (received.length === 1) resolve();
    });
  });
  await first;

  await call(events, 'Publish', {
    event: { chat_id: chat, message_sent: { message: { id: 'm3', name: 'Alice', text: 'Shall we go?', is_user: true } } },
  });
  const version = await call(memory, 'AddRunningRecap', {
    chat_id: chat,
    content: 'Alice and Bob met and set off.',
    scene_count: 1,
  });
  check(version.version === 0, 'the first running-recap version is 0');
  await ended; // max_updates=3 ends the stream after the third

  check(JSON.stringify(received.map((i) => i.revision)) === '[1,2,3]', 'revisions 1, 2, 3');
  const triggers = received.map((i) => i.trigger);
  check(
    JSON.stringify(triggers) ===
      JSON.stringify([
        'REFRESH_TRIGGER_CHAT_CHANGED',
        'REFRESH_TRIGGER_MESSAGE_SENT',
        'REFRESH_TRIGGER_RUNNING_RECAP_CHANGED',
      ]),
    `triggers in order, got ${triggers}`,
  );
  const last = received[received.length - 1];
  check(last.text.includes('Alice and Bob met and set off.'), 'the recap is in the injection');
  check(last.text.startsWith('# Story Memory'), 'the default template wraps it');
  check(last.position === 'INJECTION_POSITION_BEFORE_PROMPT', 'default position BEFORE_PROMPT');
  const current = await call(injections, 'GetInjection', { chat_id: chat });
  check(current.revision === 3, 'GetInjection agrees');
  console.log('node example: OK');
  for (const client of [events, memory, settings, injections]) client.close();
}

main().catch((error) => {
  console.error(`FAILED: ${error.message}`);
  process.exit(1);
});
