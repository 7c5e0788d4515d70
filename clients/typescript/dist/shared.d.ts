export * from "./gen/recap/v1/recap_pb.js";
export { baseUrlOf, bearerToken, createRecapdClient, type CommonConnectOptions, type RecapdClient, } from "./clients.js";
export { DEFAULT_FOLLOW_BACKOFF, RETRYABLE_FOLLOW_CODES, RETRYABLE_FOLLOW_CODES_FROM_CLIENT, followInjections, isRetryableFollowError, type FollowOptions, type FollowRetryEvent, } from "./follow.js";
export { Code, ConnectError, type CallOptions, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
export { create, fromBinary, fromJson, toBinary, toJson, type MessageInitShape } from "@bufbuild/protobuf";
