// What both entry points (node.ts, browser.ts) export besides `connect`.
export * from "./gen/recap/v1/recap_pb.js";
export { baseUrlOf, bearerToken, createRecapdClient, } from "./clients.js";
export { DEFAULT_FOLLOW_BACKOFF, RETRYABLE_FOLLOW_CODES, RETRYABLE_FOLLOW_CODES_FROM_CLIENT, followInjections, isRetryableFollowError, } from "./follow.js";
export { Code, ConnectError } from "@connectrpc/connect";
export { create, fromBinary, fromJson, toBinary, toJson } from "@bufbuild/protobuf";
