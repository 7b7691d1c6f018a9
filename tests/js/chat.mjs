// A conversation with GRASP through the official LangGraph JS SDK, as a chat product holds one.
//
//   node chat.mjs URL CONTEXT_JSON QUESTION...
//
// Each question is a turn on one thread, sent as a chat message and streamed with
// messages-tuple and custom. Prints one JSON object: per turn what the stream carried (the
// answer message, the progress events, the answer's deltas), and the thread's messages at the end.
import { Client } from "@langchain/langgraph-sdk";

const [url, contextJson, ...questions] = process.argv.slice(2);
const client = new Client({ apiUrl: url });
const context = JSON.parse(contextJson);

function text(content) {
  if (typeof content === "string") return content;
  return content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("");
}

function annotations(content) {
  if (typeof content === "string") return [];
  return content.flatMap((block) => block.annotations ?? []);
}

const thread = await client.threads.create();
const turns = [];
for (const question of questions) {
  const custom = [];
  const messages = [];
  const stream = client.runs.stream(thread.thread_id, "grasp", {
    input: { messages: [{ role: "user", content: question }] },
    context,
    streamMode: ["messages-tuple", "custom"],
  });
  for await (const part of stream) {
    if (part.event === "error") throw new Error(JSON.stringify(part.data));
    if (part.event === "custom") custom.push(part.data);
    if (part.event === "messages") {
      const [message, metadata] = part.data;
      messages.push({ message, node: metadata.langgraph_node });
    }
  }
  // The turn's answer: the whole AI message (not a token chunk) the run appended.
  const replies = messages.filter(({ message }) => message.type === "ai");
  const reply = replies[replies.length - 1];
  turns.push({
    question,
    reply_count: replies.length,
    reply_node: reply?.node,
    reply_text: reply ? text(reply.message.content) : null,
    reply_annotations: reply ? annotations(reply.message.content) : [],
    token_chunks: messages.filter(({ message }) => message.type === "AIMessageChunk").length,
    sub_questions: custom
      .filter((e) => e.event === "plan")
      .flatMap((e) => e.sub_questions.map((sq) => sq.text)),
    deltas: custom
      .filter((e) => e.event === "answer_delta")
      .map((e) => e.text)
      .join(""),
    answer_event: custom.find((e) => e.event === "answer") ?? null,
  });
}
const state = await client.threads.getState(thread.thread_id);
const history = state.values.messages.map((m) => ({ type: m.type, text: text(m.content) }));
console.log(JSON.stringify({ thread: thread.thread_id, turns, messages: history }));
