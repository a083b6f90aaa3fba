// OpenAI's Node.js client against the gateway, as a user's code would call it:
//   node chat.mjs BASE_URL API_KEY MODEL
// Prints one JSON line: a chat completion, a streamed one (its chunk count and text), a
// completion, and the error the client raises for a model that does not exist.
import OpenAI from 'openai';

const [baseURL, apiKey, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const messages = [{ role: 'user', content: 'Say hello' }];

const whole = await client.chat.completions.create({ model, messages, max_tokens: 8 });

const stream = await client.chat.completions.create({ model, messages, max_tokens: 8, stream: true });
let chunks = 0;
let text = '';
for await (const chunk of stream) {
  chunks += 1;
  text += chunk.choices[0]?.delta?.content ?? '';
}

const completion = await client.completions.create({ model, prompt: 'Once upon', max_tokens: 4 });

let missing = null;
try {
  await client.chat.completions.create({ model: 'no-such-endpoint', messages });
} catch (e) {
  missing = { status: e.status, code: e.code, type: e.type, param: e.param };
}

const models = await client.models.list();
console.log(JSON.stringify({
  whole: {
    object: whole.object,
    model: whole.model,
    finish: whole.choices[0].finish_reason,
    tokens: whole.usage.completion_tokens,
  },
  stream: { chunks, text },
  completion: { object: completion.object, tokens: completion.usage.completion_tokens },
  missing,
  models: models.data.map((m) => m.id),
}));
