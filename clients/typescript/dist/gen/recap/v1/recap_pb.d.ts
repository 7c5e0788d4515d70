import type { GenEnum, GenFile, GenMessage, GenService } from "@bufbuild/protobuf/codegenv2";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { Message as Message$1 } from "@bufbuild/protobuf";
/**
 * Describes the file recap/v1/recap.proto.
 */
export declare const file_recap_v1_recap: GenFile;
/**
 * One chat message as the backend knows it. Messages are created by
 * chat_changed, message_sent, message_received and more_messages_loaded;
 * every swipe of a new message starts with empty MessageData.
 *
 * @generated from message recap.v1.Message
 */
export type Message = Message$1<"recap.v1.Message"> & {
    /**
     * Chosen by the client; unique within the chat (a second use is
     * ALREADY_EXISTS). Non-empty, at most 256 bytes, no control characters
     * (else INVALID_ARGUMENT on `<path>.id`).
     *
     * @generated from field: string id = 1;
     */
    id: string;
    /**
     * Speaker name, stored as given (not used by refreshes). At most
     * --max-text-bytes bytes.
     *
     * @generated from field: string name = 2;
     */
    name: string;
    /**
     * The current swipe's text. When `swipes` is set and `text` is empty, the
     * text is swipes[swipe_id]; when both are set, `text` replaces swipes[swipe_id].
     * Without `swipes` it is the only swipe. Its token count (with the chat's
     * tokenizer) is compared with `message_length_threshold`. At most
     * --max-text-bytes bytes.
     *
     * @generated from field: string text = 3;
     */
    text: string;
    /**
     * Written by the user; such messages are excluded while
     * `include_user_messages` is off. Default false.
     *
     * @generated from field: bool is_user = 4;
     */
    isUser: boolean;
    /**
     * A hide made by hand (SillyTavern's is_system). Auto-hide never changes
     * it. Hidden messages are excluded while `include_system_messages` is off.
     * Default false.
     *
     * @generated from field: bool hidden = 5;
     */
    hidden: boolean;
    /**
     * A narrator message; excluded while `include_narrator_messages` is off.
     * Default false.
     *
     * @generated from field: bool is_narrator = 6;
     */
    isNarrator: boolean;
    /**
     * A thought message (Stepped Thinking); always excluded. Default false.
     *
     * @generated from field: bool is_thoughts = 7;
     */
    isThoughts: boolean;
    /**
     * The character that wrote the message (group chats); empty for none.
     * Matched exactly against `disabled_character_keys`. At most
     * --max-text-bytes bytes.
     *
     * @generated from field: string character_key = 8;
     */
    characterKey: string;
    /**
     * Every swipe's text; empty means one swipe, `text`. Each entry at most
     * --max-text-bytes bytes.
     *
     * @generated from field: repeated string swipes = 9;
     */
    swipes: string[];
    /**
     * Index of the current swipe in `swipes` (0-based). Must be < the number
     * of `swipes`, and 0 when `swipes` is empty (else INVALID_ARGUMENT on
     * `<path>.swipe_id`).
     *
     * @generated from field: uint32 swipe_id = 10;
     */
    swipeId: number;
};
/**
 * Describes the message recap.v1.Message.
 * Use `create(MessageSchema)` to create a new message.
 */
export declare const MessageSchema: GenMessage<Message>;
/**
 * The chat was opened. Immediate refresh. Creates the chat if unknown.
 * Duplicate ids in the list are ALREADY_EXISTS.
 *
 * @generated from message recap.v1.ChatChanged
 */
export type ChatChanged = Message$1<"recap.v1.ChatChanged"> & {
    /**
     * Empty: the transcript is left as it is. Non-empty: the full transcript,
     * oldest first. Messages whose id is already known keep their swipes'
     * MessageData (per swipe index) and take the new text, swipes and flags;
     * new ids are added; known ids not in the list are removed with their data
     * (no running-recap cleanup runs); the order becomes the list's.
     *
     * @generated from field: repeated recap.v1.Message messages = 1;
     */
    messages: Message[];
    /**
     * The character the chat is with (SillyTavern's avatar file name; empty
     * in group chats): decides its character's profile binding (see
     * SettingsService.BindProfile). Empty: left as it is (a chat without one
     * has none). Id rules apply (INVALID_ARGUMENT on
     * `event.chat_changed.character_key`). A change of it refreshes the chat
     * once more after the event's refresh.
     *
     * @generated from field: string character_key = 2;
     */
    characterKey: string;
    /**
     * The group the chat belongs to (SillyTavern's group id): its binding and
     * its disabled members apply to the chat. Empty: left as it is (a chat a
     * group lists in its `chats` is in that group anyway). Id rules apply.
     *
     * @generated from field: string group_id = 3;
     */
    groupId: string;
};
/**
 * Describes the message recap.v1.ChatChanged.
 * Use `create(ChatChangedSchema)` to create a new message.
 */
export declare const ChatChangedSchema: GenMessage<ChatChanged>;
/**
 * A user message was appended at the end of the chat. Debounced refresh.
 * Creates the chat if unknown.
 *
 * @generated from message recap.v1.MessageSent
 */
export type MessageSent = Message$1<"recap.v1.MessageSent"> & {
    /**
     * Required (INVALID_ARGUMENT on `event.message_sent.message` when absent).
     * An id already in the chat is ALREADY_EXISTS.
     *
     * @generated from field: recap.v1.Message message = 1;
     */
    message?: Message | undefined;
};
/**
 * Describes the message recap.v1.MessageSent.
 * Use `create(MessageSentSchema)` to create a new message.
 */
export declare const MessageSentSchema: GenMessage<MessageSent>;
/**
 * A character message was appended at the end of the chat. Debounced
 * refresh. Creates the chat if unknown.
 *
 * @generated from message recap.v1.MessageReceived
 */
export type MessageReceived = Message$1<"recap.v1.MessageReceived"> & {
    /**
     * Required (INVALID_ARGUMENT on `event.message_received.message` when
     * absent). An id already in the chat is ALREADY_EXISTS.
     *
     * @generated from field: recap.v1.Message message = 1;
     */
    message?: Message | undefined;
};
/**
 * Describes the message recap.v1.MessageReceived.
 * Use `create(MessageReceivedSchema)` to create a new message.
 */
export declare const MessageReceivedSchema: GenMessage<MessageReceived>;
/**
 * The current swipe's text of a message changed; its MessageData is kept.
 * Debounced refresh. Unknown chat or message: NOT_FOUND.
 *
 * @generated from message recap.v1.MessageEdited
 */
export type MessageEdited = Message$1<"recap.v1.MessageEdited"> & {
    /**
     * The message to edit; id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string message_id = 1;
     */
    messageId: string;
    /**
     * The new text of the current swipe (may be empty). At most
     * --max-text-bytes bytes.
     *
     * @generated from field: string text = 2;
     */
    text: string;
};
/**
 * Describes the message recap.v1.MessageEdited.
 * Use `create(MessageEditedSchema)` to create a new message.
 */
export declare const MessageEditedSchema: GenMessage<MessageEdited>;
/**
 * A message was removed, with all its swipes and their data. Then the
 * running-recap cleanup deletes every version whose `new_scene_message_id`
 * no longer exists or has no (non-empty) `scene_recap_memory`. Immediate
 * refresh. Unknown chat or message: NOT_FOUND.
 *
 * @generated from message recap.v1.MessageDeleted
 */
export type MessageDeleted = Message$1<"recap.v1.MessageDeleted"> & {
    /**
     * The message to delete; id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string message_id = 1;
     */
    messageId: string;
};
/**
 * Describes the message recap.v1.MessageDeleted.
 * Use `create(MessageDeletedSchema)` to create a new message.
 */
export declare const MessageDeletedSchema: GenMessage<MessageDeleted>;
/**
 * A message switched swipe; swipe_id == number of swipes makes a new one.
 * Debounced refresh. Unknown chat or message: NOT_FOUND.
 *
 * @generated from message recap.v1.MessageSwiped
 */
export type MessageSwiped = Message$1<"recap.v1.MessageSwiped"> & {
    /**
     * The message; id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string message_id = 1;
     */
    messageId: string;
    /**
     * 0-based. Equal to the number of swipes: a new swipe is appended with
     * `text` and becomes current; its MessageData is a copy of the previously
     * current swipe's with the memory cleared as ClearMemory does (memory,
     * prefill, error and reasoning unset; edited and exclude false), so the
     * scene break, its visibility and name, the scene recap and
     * `is_auto_recap_system_memory` carry over. Lower: that existing swipe
     * becomes current, with its own text and data. Higher: INVALID_ARGUMENT
     * on `event.message_swiped.swipe_id`.
     *
     * @generated from field: uint32 swipe_id = 2;
     */
    swipeId: number;
    /**
     * For a new swipe: its text (may be empty). For an existing swipe: a
     * non-empty value replaces that swipe's text; empty keeps it. At most
     * --max-text-bytes bytes.
     *
     * @generated from field: string text = 3;
     */
    text: string;
};
/**
 * Describes the message recap.v1.MessageSwiped.
 * Use `create(MessageSwipedSchema)` to create a new message.
 */
export declare const MessageSwipedSchema: GenMessage<MessageSwiped>;
/**
 * Older messages were loaded; they are prepended in the given order.
 * Immediate refresh. Creates the chat if unknown.
 *
 * @generated from message recap.v1.MoreMessagesLoaded
 */
export type MoreMessagesLoaded = Message$1<"recap.v1.MoreMessagesLoaded"> & {
    /**
     * Oldest first; placed before the chat's current first message. An id
     * already in the chat, or repeated in the list, is ALREADY_EXISTS and
     * nothing is added.
     *
     * @generated from field: repeated recap.v1.Message messages = 1;
     */
    messages: Message[];
};
/**
 * Describes the message recap.v1.MoreMessagesLoaded.
 * Use `create(MoreMessagesLoadedSchema)` to create a new message.
 */
export declare const MoreMessagesLoadedSchema: GenMessage<MoreMessagesLoaded>;
/**
 * Asks for an immediate refresh (trigger REFRESH_REQUESTED), also for a
 * disabled chat. Creates the chat if unknown.
 *
 * @generated from message recap.v1.RefreshRequested
 */
export type RefreshRequested = Message$1<"recap.v1.RefreshRequested"> & {};
/**
 * Describes the message recap.v1.RefreshRequested.
 * Use `create(RefreshRequestedSchema)` to create a new message.
 */
export declare const RefreshRequestedSchema: GenMessage<RefreshRequested>;
/**
 * One chat event. Events of one chat are applied in arrival order; chats
 * are independent of each other.
 *
 * @generated from message recap.v1.Event
 */
export type Event = Message$1<"recap.v1.Event"> & {
    /**
     * The chat. Non-empty, at most 256 bytes, no control characters
     * (INVALID_ARGUMENT on `event.chat_id`).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * What happened. Required: unset is INVALID_ARGUMENT on `event.kind`.
     * Immediate refresh: chat_changed, message_deleted, more_messages_loaded,
     * refresh_requested. Debounced by `debounce_ms`: message_sent,
     * message_received, message_edited, message_swiped. A disabled chat still
     * changes, but is refreshed only by the immediate kinds.
     *
     * @generated from oneof recap.v1.Event.kind
     */
    kind: {
        /**
         * The chat was opened (see ChatChanged).
         *
         * @generated from field: recap.v1.ChatChanged chat_changed = 2;
         */
        value: ChatChanged;
        case: "chatChanged";
    } | {
        /**
         * A user message was appended (see MessageSent).
         *
         * @generated from field: recap.v1.MessageSent message_sent = 3;
         */
        value: MessageSent;
        case: "messageSent";
    } | {
        /**
         * A character message was appended (see MessageReceived).
         *
         * @generated from field: recap.v1.MessageReceived message_received = 4;
         */
        value: MessageReceived;
        case: "messageReceived";
    } | {
        /**
         * A message's current text changed (see MessageEdited).
         *
         * @generated from field: recap.v1.MessageEdited message_edited = 5;
         */
        value: MessageEdited;
        case: "messageEdited";
    } | {
        /**
         * A message was removed (see MessageDeleted).
         *
         * @generated from field: recap.v1.MessageDeleted message_deleted = 6;
         */
        value: MessageDeleted;
        case: "messageDeleted";
    } | {
        /**
         * A message switched or added a swipe (see MessageSwiped).
         *
         * @generated from field: recap.v1.MessageSwiped message_swiped = 7;
         */
        value: MessageSwiped;
        case: "messageSwiped";
    } | {
        /**
         * Older messages were prepended (see MoreMessagesLoaded).
         *
         * @generated from field: recap.v1.MoreMessagesLoaded more_messages_loaded = 8;
         */
        value: MoreMessagesLoaded;
        case: "moreMessagesLoaded";
    } | {
        /**
         * Refresh now (see RefreshRequested).
         *
         * @generated from field: recap.v1.RefreshRequested refresh_requested = 9;
         */
        value: RefreshRequested;
        case: "refreshRequested";
    } | {
        case: undefined;
        value?: undefined;
    };
};
/**
 * Describes the message recap.v1.Event.
 * Use `create(EventSchema)` to create a new message.
 */
export declare const EventSchema: GenMessage<Event>;
/**
 * Publish's request.
 *
 * @generated from message recap.v1.PublishRequest
 */
export type PublishRequest = Message$1<"recap.v1.PublishRequest"> & {
    /**
     * The event to apply. Required: absent is INVALID_ARGUMENT on `event`.
     *
     * @generated from field: recap.v1.Event event = 1;
     */
    event?: Event | undefined;
};
/**
 * Describes the message recap.v1.PublishRequest.
 * Use `create(PublishRequestSchema)` to create a new message.
 */
export declare const PublishRequestSchema: GenMessage<PublishRequest>;
/**
 * Publish's answer.
 *
 * @generated from message recap.v1.PublishResponse
 */
export type PublishResponse = Message$1<"recap.v1.PublishResponse"> & {
    /**
     * The chat's injection revision when the answer was sent.
     * After an immediate trigger it is the revision of the refresh this event
     * ran; after a debounced one it is the revision before the pending
     * refresh (which comes later, unless `debounce_ms` is 0 or the chat is
     * disabled).
     *
     * @generated from field: uint64 revision = 1;
     */
    revision: bigint;
};
/**
 * Describes the message recap.v1.PublishResponse.
 * Use `create(PublishResponseSchema)` to create a new message.
 */
export declare const PublishResponseSchema: GenMessage<PublishResponse>;
/**
 * ST-Auto-Recap's per-message (per-swipe) data. Every field has presence.
 * In answers, an unset field was never set (different from "" or false).
 * In SetMessageData only set fields change; a field can be set to "" or
 * false but not unset again (ClearMemory unsets memory, prefill, error and
 * reasoning). String fields are at most --max-text-bytes bytes each
 * (INVALID_ARGUMENT on `data.<field>`).
 *
 * @generated from message recap.v1.MessageData
 */
export type MessageData = Message$1<"recap.v1.MessageData"> & {
    /**
     * The message recap written by the backend's LLM. The message's memory
     * text is this, with `prefill` in front while `show_prefill` is on; when
     * that text is empty (unset or empty memory, and no prefill shown) the
     * message has no memory and is not included (excluded_reason
     * "no_memory"). With `show_prefill` on, a prefill alone is the memory.
     *
     * @generated from field: optional string memory = 1;
     */
    memory?: string | undefined;
    /**
     * Text put directly in front of `memory` (no separator) when
     * `show_prefill` is on, also when `memory` is unset or empty; ignored
     * otherwise.
     *
     * @generated from field: optional string prefill = 2;
     */
    prefill?: string | undefined;
    /**
     * True: excluded by hand from the short-term memory (excluded_reason
     * "exclude"). Unset counts as false.
     *
     * @generated from field: optional bool exclude = 3;
     */
    exclude?: boolean | undefined;
    /**
     * The last recap attempt's error, stored for the client; recapd does not
     * use it.
     *
     * @generated from field: optional string error = 4;
     */
    error?: string | undefined;
    /**
     * The LLM's reasoning for the recap, stored for the client; not used.
     *
     * @generated from field: optional string reasoning = 5;
     */
    reasoning?: string | undefined;
    /**
     * Whether the memory was edited by hand, stored for the client; not used.
     *
     * @generated from field: optional bool edited = 6;
     */
    edited?: boolean | undefined;
    /**
     * True: this message ends a scene. A visible scene break (this true and
     * `scene_break_visible` not false) counts for auto-hide.
     *
     * @generated from field: optional bool scene_break = 7;
     */
    sceneBreak?: boolean | undefined;
    /**
     * False hides the scene break from auto-hide; unset or true counts as
     * visible.
     *
     * @generated from field: optional bool scene_break_visible = 8;
     */
    sceneBreakVisible?: boolean | undefined;
    /**
     * The scene's display name, stored for the client; not used.
     *
     * @generated from field: optional string scene_break_name = 9;
     */
    sceneBreakName?: string | undefined;
    /**
     * The scene recap of the scene this message ends: the current one of
     * `scene_recap_versions`. A running-recap version whose
     * `new_scene_message_id` is this message is deleted by the cleanup after
     * a message_deleted event when this is unset or empty. In SetMessageData,
     * a value that differs from the current version is a new version,
     * appended and made current (the same value changes nothing); recapd's
     * own scene recaps are added the same way.
     *
     * @generated from field: optional string scene_recap_memory = 10;
     */
    sceneRecapMemory?: string | undefined;
    /**
     * True: the extension's own system-memory message; always excluded
     * (excluded_reason "is_auto_recap_system_memory"). Unset counts as false.
     *
     * @generated from field: optional bool is_auto_recap_system_memory = 11;
     */
    isAutoRecapSystemMemory?: boolean | undefined;
    /**
     * Every scene recap this scene had, oldest first: at most 1000, together
     * within --max-text-bytes (what an import of the exported file accepts);
     * adding one past either lets go of the oldest, never the current one.
     * Returned as stored; a message whose scene recap predates versions
     * returns none here (its scene recap is its one version, index 0). In
     * SetMessageData a non-empty list replaces the stored one (more than
     * 1000, or over the limit together: INVALID_ARGUMENT) and its last
     * version (or the one
     * `scene_recap_current_index` names) becomes current; an empty list
     * changes nothing (a list has no "unset").
     *
     * @generated from field: repeated string scene_recap_versions = 12;
     */
    sceneRecapVersions: string[];
    /**
     * Which of `scene_recap_versions` is current (unset reads as 0). In
     * SetMessageData it selects a version, of the given list or else of the
     * stored one; not an index of it: INVALID_ARGUMENT on
     * `data.scene_recap_current_index`. SelectSceneRecapVersion does the same
     * on its own.
     *
     * @generated from field: optional uint32 scene_recap_current_index = 13;
     */
    sceneRecapCurrentIndex?: number | undefined;
};
/**
 * Describes the message recap.v1.MessageData.
 * Use `create(MessageDataSchema)` to create a new message.
 */
export declare const MessageDataSchema: GenMessage<MessageData>;
/**
 * SetMessageData's request.
 *
 * @generated from message recap.v1.SetMessageDataRequest
 */
export type SetMessageDataRequest = Message$1<"recap.v1.SetMessageDataRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise); id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * A message of that chat (NOT_FOUND otherwise); id rules apply.
     *
     * @generated from field: string message_id = 2;
     */
    messageId: string;
    /**
     * Only present fields change, on the message's current swipe.
     * Absent or empty changes nothing.
     *
     * @generated from field: recap.v1.MessageData data = 3;
     */
    data?: MessageData | undefined;
    /**
     * True: a memory edited by hand, as ST-Auto-Recap's edit_memory does it.
     * `data.memory` is required (INVALID_ARGUMENT on `data.memory` without
     * it; "" empties the memory). The same text as the memory changes
     * nothing; another sets it, unsets `error`, `reasoning` and `prefill`,
     * sets `edited` to whether the text is non-empty, and sets `exclude` to
     * false when the new or the old memory is empty. Other present fields of
     * `data` are set as without `edit`. False (the default): every present
     * field is set as given.
     *
     * @generated from field: bool edit = 4;
     */
    edit: boolean;
};
/**
 * Describes the message recap.v1.SetMessageDataRequest.
 * Use `create(SetMessageDataRequestSchema)` to create a new message.
 */
export declare const SetMessageDataRequestSchema: GenMessage<SetMessageDataRequest>;
/**
 * GetMessageData's request.
 *
 * @generated from message recap.v1.GetMessageDataRequest
 */
export type GetMessageDataRequest = Message$1<"recap.v1.GetMessageDataRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise); id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * A message of that chat (NOT_FOUND otherwise); id rules apply.
     *
     * @generated from field: string message_id = 2;
     */
    messageId: string;
    /**
     * Unset: the data of the message's current swipe. Set: the data of that
     * swipe (0-based, as the extension's get_previous_swipe_memory reads an
     * earlier swipe's); not a swipe of the message: INVALID_ARGUMENT on
     * `swipe_id`.
     *
     * @generated from field: optional uint32 swipe_id = 3;
     */
    swipeId?: number | undefined;
};
/**
 * Describes the message recap.v1.GetMessageDataRequest.
 * Use `create(GetMessageDataRequestSchema)` to create a new message.
 */
export declare const GetMessageDataRequestSchema: GenMessage<GetMessageDataRequest>;
/**
 * SelectSceneRecapVersion's request.
 *
 * @generated from message recap.v1.SelectSceneRecapVersionRequest
 */
export type SelectSceneRecapVersionRequest = Message$1<"recap.v1.SelectSceneRecapVersionRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise); id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * A message of that chat (NOT_FOUND otherwise); id rules apply.
     *
     * @generated from field: string message_id = 2;
     */
    messageId: string;
    /**
     * The version to make current: an index of the message's
     * `scene_recap_versions` (a message whose scene recap predates versions
     * has one, index 0); otherwise INVALID_ARGUMENT on `index`.
     *
     * @generated from field: uint32 index = 3;
     */
    index: number;
};
/**
 * Describes the message recap.v1.SelectSceneRecapVersionRequest.
 * Use `create(SelectSceneRecapVersionRequestSchema)` to create a new message.
 */
export declare const SelectSceneRecapVersionRequestSchema: GenMessage<SelectSceneRecapVersionRequest>;
/**
 * ClearMemory's request.
 *
 * @generated from message recap.v1.ClearMemoryRequest
 */
export type ClearMemoryRequest = Message$1<"recap.v1.ClearMemoryRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise); id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * A message of that chat (NOT_FOUND otherwise); id rules apply.
     *
     * @generated from field: string message_id = 2;
     */
    messageId: string;
};
/**
 * Describes the message recap.v1.ClearMemoryRequest.
 * Use `create(ClearMemoryRequestSchema)` to create a new message.
 */
export declare const ClearMemoryRequestSchema: GenMessage<ClearMemoryRequest>;
/**
 * One version of the running scene recap.
 *
 * @generated from message recap.v1.RunningRecapVersion
 */
export type RunningRecapVersion = Message$1<"recap.v1.RunningRecapVersion"> & {
    /**
     * The version number: the highest existing version + 1 when added (0 for
     * the first), so the number of a deleted highest version is reused.
     *
     * @generated from field: uint32 version = 1;
     */
    version: number;
    /**
     * When the version was added (server clock, UTC, millisecond precision).
     *
     * @generated from field: google.protobuf.Timestamp created_at = 2;
     */
    createdAt?: Timestamp | undefined;
    /**
     * The running recap text; the injection is the template applied to the
     * current version's content. Empty content gives an empty injection.
     *
     * @generated from field: string content = 3;
     */
    content: string;
    /**
     * Number of scenes the recap covers, as given by the client; stored only.
     *
     * @generated from field: uint32 scene_count = 4;
     */
    sceneCount: number;
    /**
     * Number of scenes left out of the recap, as given by the client; stored
     * only.
     *
     * @generated from field: uint32 excluded_count = 5;
     */
    excludedCount: number;
    /**
     * Empty when the version refers to no scene message.
     * The message that started the covered scenes; stored only (the cleanup
     * does not look at it).
     *
     * @generated from field: string prev_scene_message_id = 6;
     */
    prevSceneMessageId: string;
    /**
     * The scene message the recap was made at; empty for none. If that
     * message is deleted, or has no (non-empty) `scene_recap_memory` when any
     * message is deleted, this version is deleted. Empty: never cleaned up.
     *
     * @generated from field: string new_scene_message_id = 7;
     */
    newSceneMessageId: string;
    /**
     * The chat whose running recap this version carries over (the first
     * version of a chat made by StartChatFrom); empty for the chat's own.
     *
     * @generated from field: string carried_from_chat_id = 8;
     */
    carriedFromChatId: string;
};
/**
 * Describes the message recap.v1.RunningRecapVersion.
 * Use `create(RunningRecapVersionSchema)` to create a new message.
 */
export declare const RunningRecapVersionSchema: GenMessage<RunningRecapVersion>;
/**
 * AddRunningRecap's request.
 *
 * @generated from message recap.v1.AddRunningRecapRequest
 */
export type AddRunningRecapRequest = Message$1<"recap.v1.AddRunningRecapRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise); id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * The running recap text. At most --max-text-bytes bytes (INVALID_ARGUMENT
     * on `content`). May be empty (the injection is then empty).
     *
     * @generated from field: string content = 2;
     */
    content: string;
    /**
     * Scenes covered; stored as given.
     *
     * @generated from field: uint32 scene_count = 3;
     */
    sceneCount: number;
    /**
     * Scenes left out; stored as given.
     *
     * @generated from field: uint32 excluded_count = 4;
     */
    excludedCount: number;
    /**
     * Empty for none; otherwise id rules apply (INVALID_ARGUMENT) and the
     * message must exist in the chat (NOT_FOUND).
     *
     * @generated from field: string prev_scene_message_id = 5;
     */
    prevSceneMessageId: string;
    /**
     * Empty for none; otherwise id rules apply (INVALID_ARGUMENT) and the
     * message must exist in the chat (NOT_FOUND). See
     * RunningRecapVersion.new_scene_message_id for the cleanup rule.
     *
     * @generated from field: string new_scene_message_id = 6;
     */
    newSceneMessageId: string;
};
/**
 * Describes the message recap.v1.AddRunningRecapRequest.
 * Use `create(AddRunningRecapRequestSchema)` to create a new message.
 */
export declare const AddRunningRecapRequestSchema: GenMessage<AddRunningRecapRequest>;
/**
 * SelectRunningRecap's request.
 *
 * @generated from message recap.v1.SelectRunningRecapRequest
 */
export type SelectRunningRecapRequest = Message$1<"recap.v1.SelectRunningRecapRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise); id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * An existing version of that chat (NOT_FOUND otherwise).
     *
     * @generated from field: uint32 version = 2;
     */
    version: number;
};
/**
 * Describes the message recap.v1.SelectRunningRecapRequest.
 * Use `create(SelectRunningRecapRequestSchema)` to create a new message.
 */
export declare const SelectRunningRecapRequestSchema: GenMessage<SelectRunningRecapRequest>;
/**
 * DeleteRunningRecap's request.
 *
 * @generated from message recap.v1.DeleteRunningRecapRequest
 */
export type DeleteRunningRecapRequest = Message$1<"recap.v1.DeleteRunningRecapRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise); id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * An existing version of that chat (NOT_FOUND otherwise).
     *
     * @generated from field: uint32 version = 2;
     */
    version: number;
};
/**
 * Describes the message recap.v1.DeleteRunningRecapRequest.
 * Use `create(DeleteRunningRecapRequestSchema)` to create a new message.
 */
export declare const DeleteRunningRecapRequestSchema: GenMessage<DeleteRunningRecapRequest>;
/**
 * ListRunningRecaps's request.
 *
 * @generated from message recap.v1.ListRunningRecapsRequest
 */
export type ListRunningRecapsRequest = Message$1<"recap.v1.ListRunningRecapsRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise); id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
};
/**
 * Describes the message recap.v1.ListRunningRecapsRequest.
 * Use `create(ListRunningRecapsRequestSchema)` to create a new message.
 */
export declare const ListRunningRecapsRequestSchema: GenMessage<ListRunningRecapsRequest>;
/**
 * A chat's running-recap versions.
 *
 * @generated from message recap.v1.ListRunningRecapsResponse
 */
export type ListRunningRecapsResponse = Message$1<"recap.v1.ListRunningRecapsResponse"> & {
    /**
     * The current version, the one the injection uses; unset when the chat
     * has none (no versions, or an imported file that named none). A chat
     * imported from a file whose `current_version` matches none of its
     * versions reports that number: nothing is injected (no fall-back to
     * another version) until a version is added or selected.
     *
     * @generated from field: optional uint32 current_version = 1;
     */
    currentVersion?: number | undefined;
    /**
     * Ascending version order.
     * Every version of the chat; empty when it has none.
     *
     * @generated from field: repeated recap.v1.RunningRecapVersion versions = 2;
     */
    versions: RunningRecapVersion[];
};
/**
 * Describes the message recap.v1.ListRunningRecapsResponse.
 * Use `create(ListRunningRecapsResponseSchema)` to create a new message.
 */
export declare const ListRunningRecapsResponseSchema: GenMessage<ListRunningRecapsResponse>;
/**
 * StartChatFrom's request.
 *
 * @generated from message recap.v1.StartChatFromRequest
 */
export type StartChatFromRequest = Message$1<"recap.v1.StartChatFromRequest"> & {
    /**
     * The chat whose memory the new chat starts with; id rules apply.
     *
     * @generated from field: string from_chat_id = 1;
     */
    fromChatId: string;
    /**
     * The new chat; id rules apply. Must not be a chat yet.
     *
     * @generated from field: string new_chat_id = 2;
     */
    newChatId: string;
};
/**
 * Describes the message recap.v1.StartChatFromRequest.
 * Use `create(StartChatFromRequestSchema)` to create a new message.
 */
export declare const StartChatFromRequestSchema: GenMessage<StartChatFromRequest>;
/**
 * StartChatFrom's answer.
 *
 * @generated from message recap.v1.StartChatFromResponse
 */
export type StartChatFromResponse = Message$1<"recap.v1.StartChatFromResponse"> & {
    /**
     * The new chat.
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * Whether the old chat's running recap was carried over.
     *
     * @generated from field: bool carried_recap = 2;
     */
    carriedRecap: boolean;
    /**
     * The book the new chat's settings name as its chat book; empty for
     * none.
     *
     * @generated from field: string chat_book = 3;
     */
    chatBook: string;
    /**
     * The new chat's recall_chats.
     *
     * @generated from field: repeated string recall_chats = 4;
     */
    recallChats: string[];
};
/**
 * Describes the message recap.v1.StartChatFromResponse.
 * Use `create(StartChatFromResponseSchema)` to create a new message.
 */
export declare const StartChatFromResponseSchema: GenMessage<StartChatFromResponse>;
/**
 * BranchChat's request.
 *
 * @generated from message recap.v1.BranchChatRequest
 */
export type BranchChatRequest = Message$1<"recap.v1.BranchChatRequest"> & {
    /**
     * The chat to branch; id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * Its message the branch ends at (included).
     *
     * @generated from field: string message_id = 2;
     */
    messageId: string;
    /**
     * The new chat; id rules apply. Must not be a chat yet.
     *
     * @generated from field: string new_chat_id = 3;
     */
    newChatId: string;
};
/**
 * Describes the message recap.v1.BranchChatRequest.
 * Use `create(BranchChatRequestSchema)` to create a new message.
 */
export declare const BranchChatRequestSchema: GenMessage<BranchChatRequest>;
/**
 * BranchChat's answer.
 *
 * @generated from message recap.v1.BranchChatResponse
 */
export type BranchChatResponse = Message$1<"recap.v1.BranchChatResponse"> & {
    /**
     * The new chat.
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * Messages in it.
     *
     * @generated from field: uint32 message_count = 2;
     */
    messageCount: number;
    /**
     * Running-recap versions in it.
     *
     * @generated from field: uint32 running_recap_count = 3;
     */
    runningRecapCount: number;
    /**
     * The lorebook its settings name as its chat book (world_info_chat_book):
     * the copy made for it; empty when the parent named none.
     *
     * @generated from field: string chat_book = 4;
     */
    chatBook: string;
};
/**
 * Describes the message recap.v1.BranchChatResponse.
 * Use `create(BranchChatResponseSchema)` to create a new message.
 */
export declare const BranchChatResponseSchema: GenMessage<BranchChatResponse>;
/**
 * DeleteChat's request.
 *
 * @generated from message recap.v1.DeleteChatRequest
 */
export type DeleteChatRequest = Message$1<"recap.v1.DeleteChatRequest"> & {
    /**
     * The chat; id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
};
/**
 * Describes the message recap.v1.DeleteChatRequest.
 * Use `create(DeleteChatRequestSchema)` to create a new message.
 */
export declare const DeleteChatRequestSchema: GenMessage<DeleteChatRequest>;
/**
 * DeleteChat's answer.
 *
 * @generated from message recap.v1.DeleteChatResponse
 */
export type DeleteChatResponse = Message$1<"recap.v1.DeleteChatResponse"> & {
    /**
     * The revision of the chat's last injection (the one with `deleted`).
     *
     * @generated from field: uint64 revision = 1;
     */
    revision: bigint;
};
/**
 * Describes the message recap.v1.DeleteChatResponse.
 * Use `create(DeleteChatResponseSchema)` to create a new message.
 */
export declare const DeleteChatResponseSchema: GenMessage<DeleteChatResponse>;
/**
 * ListChats' request.
 *
 * @generated from message recap.v1.ListChatsRequest
 */
export type ListChatsRequest = Message$1<"recap.v1.ListChatsRequest"> & {
    /**
     * 1..=1000; 0 means 100.
     *
     * @generated from field: uint32 page_size = 1;
     */
    pageSize: number;
    /**
     * From a previous answer's `next_page_token`; empty for the first page.
     *
     * @generated from field: string page_token = 2;
     */
    pageToken: string;
};
/**
 * Describes the message recap.v1.ListChatsRequest.
 * Use `create(ListChatsRequestSchema)` to create a new message.
 */
export declare const ListChatsRequestSchema: GenMessage<ListChatsRequest>;
/**
 * ListChats' answer.
 *
 * @generated from message recap.v1.ListChatsResponse
 */
export type ListChatsResponse = Message$1<"recap.v1.ListChatsResponse"> & {
    /**
     * Ordered by chat id.
     *
     * @generated from field: repeated recap.v1.ChatSummary chats = 1;
     */
    chats: ChatSummary[];
    /**
     * Empty on the last page.
     *
     * @generated from field: string next_page_token = 2;
     */
    nextPageToken: string;
};
/**
 * Describes the message recap.v1.ListChatsResponse.
 * Use `create(ListChatsResponseSchema)` to create a new message.
 */
export declare const ListChatsResponseSchema: GenMessage<ListChatsResponse>;
/**
 * One chat as ListChats shows it.
 *
 * @generated from message recap.v1.ChatSummary
 */
export type ChatSummary = Message$1<"recap.v1.ChatSummary"> & {
    /**
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * Messages in the chat.
     *
     * @generated from field: uint32 message_count = 2;
     */
    messageCount: number;
    /**
     * Its latest injection's revision (0 before its first refresh).
     *
     * @generated from field: uint64 revision = 3;
     */
    revision: bigint;
    /**
     * Whether memory is enabled for it now (its own SetChatEnabled state,
     * else default_chat_enabled; use_global_toggle_state applies; its
     * profile counts).
     *
     * @generated from field: bool enabled = 4;
     */
    enabled: boolean;
    /**
     * When it last changed: an event, a settings or recap call, an import, a
     * job's result (a refresh alone is not a change).
     *
     * @generated from field: google.protobuf.Timestamp updated_at = 5;
     */
    updatedAt?: Timestamp | undefined;
    /**
     * The character the chat is with (ChatChanged.character_key, or its
     * imported messages' `original_avatar`); empty when unknown.
     *
     * @generated from field: string character_key = 6;
     */
    characterKey: string;
    /**
     * The group the chat is in: the one ChatChanged or ImportChat named,
     * else the group whose `chats` list it; empty for none.
     *
     * @generated from field: string group_id = 7;
     */
    groupId: string;
    /**
     * The chat this one is a branch of: BranchChat's, or the
     * `chat_metadata.main_chat` of an imported SillyTavern branch or
     * checkpoint file; empty when it is no branch. Its branches are the
     * chats that name it here.
     *
     * @generated from field: string parent_chat_id = 8;
     */
    parentChatId: string;
    /**
     * The parent's message the branch was made at (BranchChat); empty for
     * an imported file (SillyTavern does not record it there) and for a
     * chat that is no branch.
     *
     * @generated from field: string parent_message_id = 9;
     */
    parentMessageId: string;
};
/**
 * Describes the message recap.v1.ChatSummary.
 * Use `create(ChatSummarySchema)` to create a new message.
 */
export declare const ChatSummarySchema: GenMessage<ChatSummary>;
/**
 * One chunk of a SillyTavern chat file being imported (ImportChatStream).
 *
 * @generated from message recap.v1.ImportChatStreamRequest
 */
export type ImportChatStreamRequest = Message$1<"recap.v1.ImportChatStreamRequest"> & {
    /**
     * The chat to create or replace: in the first message (ignored in later
     * ones).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * The next bytes of the file (UTF-8 JSONL), split anywhere; may be empty.
     *
     * @generated from field: bytes chunk = 2;
     */
    chunk: Uint8Array;
    /**
     * As ImportChatRequest.group_id: in the first message (ignored in later
     * ones).
     *
     * @generated from field: string group_id = 3;
     */
    groupId: string;
    /**
     * As ImportChatRequest.branch_from_main_chat: in the first message
     * (ignored in later ones).
     *
     * @generated from field: bool branch_from_main_chat = 4;
     */
    branchFromMainChat: boolean;
};
/**
 * Describes the message recap.v1.ImportChatStreamRequest.
 * Use `create(ImportChatStreamRequestSchema)` to create a new message.
 */
export declare const ImportChatStreamRequestSchema: GenMessage<ImportChatStreamRequest>;
/**
 * Asks for a chat as a stream of chunks of a SillyTavern chat file.
 *
 * @generated from message recap.v1.ExportChatStreamRequest
 */
export type ExportChatStreamRequest = Message$1<"recap.v1.ExportChatStreamRequest"> & {
    /**
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
};
/**
 * Describes the message recap.v1.ExportChatStreamRequest.
 * Use `create(ExportChatStreamRequestSchema)` to create a new message.
 */
export declare const ExportChatStreamRequestSchema: GenMessage<ExportChatStreamRequest>;
/**
 * One chunk of an exported SillyTavern chat file (ExportChatStream).
 *
 * @generated from message recap.v1.ExportChatStreamResponse
 */
export type ExportChatStreamResponse = Message$1<"recap.v1.ExportChatStreamResponse"> & {
    /**
     * The next bytes of the file (at most 1 MiB), split anywhere.
     *
     * @generated from field: bytes chunk = 1;
     */
    chunk: Uint8Array;
};
/**
 * Describes the message recap.v1.ExportChatStreamResponse.
 * Use `create(ExportChatStreamResponseSchema)` to create a new message.
 */
export declare const ExportChatStreamResponseSchema: GenMessage<ExportChatStreamResponse>;
/**
 * Loads a SillyTavern chat file.
 *
 * @generated from message recap.v1.ImportChatRequest
 */
export type ImportChatRequest = Message$1<"recap.v1.ImportChatRequest"> & {
    /**
     * The chat to create or replace.
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * The file's bytes (UTF-8 JSONL).
     *
     * @generated from field: bytes jsonl = 2;
     */
    jsonl: Uint8Array;
    /**
     * The group the chat belongs to (SillyTavern's group chat files carry no
     * group marker): its binding and disabled members apply to the chat.
     * Empty: the chat keeps the group it had (a chat a group lists is in it
     * anyway). Id rules apply (INVALID_ARGUMENT). An import also sets the
     * chat's character: the `original_avatar` of its character messages when
     * they all have the same one, else none (a group chat).
     *
     * @generated from field: string group_id = 3;
     */
    groupId: string;
    /**
     * For a SillyTavern branch or checkpoint file: make the chat a branch of
     * the chat the file names as its parent (`chat_metadata.main_chat`, a
     * chat of the caller's tenant), so its memory comes along. When that
     * chat's first messages are the file's (same speaker and shown text, in
     * order), the chat is made as BranchChat would make it at the file's
     * last message (the parent's messages with every swipe and their data,
     * the running-recap versions whose scene ends there or before, a copy
     * of its chat book, its timed World Info effects and recall vectors),
     * with the file's header (written back by an export) and `group_id` when
     * given; the answer's `branched_from_chat_id` names the parent.
     * Otherwise the file is imported as without this flag and
     * `not_branched_reason` says why. Either way the chat must be new:
     * ALREADY_EXISTS when `chat_id` is a chat already.
     *
     * @generated from field: bool branch_from_main_chat = 4;
     */
    branchFromMainChat: boolean;
};
/**
 * Describes the message recap.v1.ImportChatRequest.
 * Use `create(ImportChatRequestSchema)` to create a new message.
 */
export declare const ImportChatRequestSchema: GenMessage<ImportChatRequest>;
/**
 * What an import stored.
 *
 * @generated from message recap.v1.ImportChatResponse
 */
export type ImportChatResponse = Message$1<"recap.v1.ImportChatResponse"> & {
    /**
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * @generated from field: uint32 message_count = 2;
     */
    messageCount: number;
    /**
     * @generated from field: uint32 running_recap_count = 3;
     */
    runningRecapCount: number;
    /**
     * What was repaired rather than refused, in file order, one
     * `line N: what was repaired` each; empty when the file was read as
     * written.
     *
     * @generated from field: repeated string warnings = 4;
     */
    warnings: string[];
    /**
     * With branch_from_main_chat: the chat it was branched from; empty when
     * it was imported from the file alone.
     *
     * @generated from field: string branched_from_chat_id = 5;
     */
    branchedFromChatId: string;
    /**
     * With branch_from_main_chat, when it was imported from the file alone:
     * why it was not branched (the file names no parent, the parent is no
     * chat here, or its messages are not the start of the parent's).
     *
     * @generated from field: string not_branched_reason = 6;
     */
    notBranchedReason: string;
};
/**
 * Describes the message recap.v1.ImportChatResponse.
 * Use `create(ImportChatResponseSchema)` to create a new message.
 */
export declare const ImportChatResponseSchema: GenMessage<ImportChatResponse>;
/**
 * Asks for a chat as a SillyTavern chat file. An imported file's header is
 * written as the file had it; a chat made through the API that is in a
 * group gets SillyTavern's group chat header (`user_name` and
 * `character_name` both "unused").
 *
 * @generated from message recap.v1.ExportChatRequest
 */
export type ExportChatRequest = Message$1<"recap.v1.ExportChatRequest"> & {
    /**
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
};
/**
 * Describes the message recap.v1.ExportChatRequest.
 * Use `create(ExportChatRequestSchema)` to create a new message.
 */
export declare const ExportChatRequestSchema: GenMessage<ExportChatRequest>;
/**
 * A SillyTavern chat file.
 *
 * @generated from message recap.v1.ExportChatResponse
 */
export type ExportChatResponse = Message$1<"recap.v1.ExportChatResponse"> & {
    /**
     * UTF-8 JSONL: the metadata line, then one line per message.
     *
     * @generated from field: bytes jsonl = 1;
     */
    jsonl: Uint8Array;
};
/**
 * Describes the message recap.v1.ExportChatResponse.
 * Use `create(ExportChatResponseSchema)` to create a new message.
 */
export declare const ExportChatResponseSchema: GenMessage<ExportChatResponse>;
/**
 * A set of keys; a message so that presence works (set, even empty, replaces).
 *
 * @generated from message recap.v1.CharacterKeys
 */
export type CharacterKeys = Message$1<"recap.v1.CharacterKeys"> & {
    /**
     * Character keys, compared exactly with Message.character_key.
     *
     * @generated from field: repeated string keys = 1;
     */
    keys: string[];
};
/**
 * Describes the message recap.v1.CharacterKeys.
 * Use `create(CharacterKeysSchema)` to create a new message.
 */
export declare const CharacterKeysSchema: GenMessage<CharacterKeys>;
/**
 * A list of strings; a message so that presence works (set, even empty,
 * replaces).
 *
 * @generated from message recap.v1.StringList
 */
export type StringList = Message$1<"recap.v1.StringList"> & {
    /**
     * The strings, in order.
     *
     * @generated from field: repeated string values = 1;
     */
    values: string[];
};
/**
 * Describes the message recap.v1.StringList.
 * Use `create(StringListSchema)` to create a new message.
 */
export declare const StringListSchema: GenMessage<StringList>;
/**
 * Every field has presence: in an update only present fields change.
 * In answers (GetSettings, UpdateSettings) every field is set, except
 * `message_recap_context_limit` and `max_context_tokens` while they have no
 * value (and `profile` while none applies). Effective settings of a chat =
 * defaults, then the global settings, then its profile (see `profile`),
 * then the chat's overrides. To return a field to its default (global) or
 * stop overriding it (chat), name it in UpdateSettingsRequest.clear.
 *
 * @generated from message recap.v1.Settings
 */
export type Settings = Message$1<"recap.v1.Settings"> & {
    /**
     * Where the injection goes. Default BEFORE_PROMPT. UNSPECIFIED or unknown:
     * INVALID_ARGUMENT on `settings.position`. A disabled chat's injection is
     * always IN_PROMPT.
     *
     * @generated from field: optional recap.v1.InjectionPosition position = 1;
     */
    position?: InjectionPosition | undefined;
    /**
     * For IN_CHAT: how many messages from the end of the chat history the
     * injection goes (0 = after the last message). Default 2; 0..=1000, else
     * INVALID_ARGUMENT on `depth`. Ignored by other positions.
     *
     * @generated from field: optional int32 depth = 2;
     */
    depth?: number | undefined;
    /**
     * Role of the injected message. Default SYSTEM. UNSPECIFIED or unknown:
     * INVALID_ARGUMENT on `settings.role`.
     *
     * @generated from field: optional recap.v1.InjectionRole role = 3;
     */
    role?: InjectionRole | undefined;
    /**
     * Whether SillyTavern's World Info scans the injection text. Default false.
     *
     * @generated from field: optional bool scan = 4;
     */
    scan?: boolean | undefined;
    /**
     * The running-recap template; every `{{running_recap}}` is replaced
     * literally by the current version's content; a blank template (empty or
     * only white space) gives the raw content. Default
     * "# Story Memory\n\nThe following is a cumulative memory of key scenes
     * and developments from the roleplay so far.\n\n{{running_recap}}".
     * At most --max-text-bytes bytes (INVALID_ARGUMENT on `settings.template`).
     *
     * @generated from field: optional string template = 5;
     */
    template?: string | undefined;
    /**
     * Whether user messages' recaps can be included. Default true.
     *
     * @generated from field: optional bool include_user_messages = 6;
     */
    includeUserMessages?: boolean | undefined;
    /**
     * Whether hidden messages' recaps (hidden by hand or by auto-hide) can be
     * included. Default true.
     *
     * @generated from field: optional bool include_system_messages = 7;
     */
    includeSystemMessages?: boolean | undefined;
    /**
     * Whether narrator messages' recaps can be included. Default true.
     *
     * @generated from field: optional bool include_narrator_messages = 8;
     */
    includeNarratorMessages?: boolean | undefined;
    /**
     * In tokens: messages whose text has fewer tokens are excluded. Default 0
     * (off). Must be >= 0 (INVALID_ARGUMENT on
     * `settings.message_length_threshold`).
     *
     * @generated from field: optional int64 message_length_threshold = 9;
     */
    messageLengthThreshold?: bigint | undefined;
    /**
     * Token budget for the joined message recaps: tokens (ABSOLUTE) or a
     * percentage of `max_context_tokens` (PERCENT). Unset (the default) means
     * no limit; 0 includes no recap. Must be >= 0 (INVALID_ARGUMENT on
     * `settings.message_recap_context_limit`). Can only be unset through
     * `clear`.
     *
     * @generated from field: optional int64 message_recap_context_limit = 10;
     */
    messageRecapContextLimit?: bigint | undefined;
    /**
     * How `message_recap_context_limit` is read. Default ABSOLUTE. PERCENT with
     * a limit and no `max_context_tokens` is INVALID_ARGUMENT on
     * `message_recap_context_limit`. UNSPECIFIED or unknown: INVALID_ARGUMENT
     * on `settings.message_recap_context_type`.
     *
     * @generated from field: optional recap.v1.RecapContextType message_recap_context_type = 11;
     */
    messageRecapContextType?: RecapContextType | undefined;
    /**
     * The model's context size in tokens, used only by PERCENT. Default unset.
     * Must be >= 0 (INVALID_ARGUMENT on `settings.max_context_tokens`).
     *
     * @generated from field: optional int64 max_context_tokens = 12;
     */
    maxContextTokens?: bigint | undefined;
    /**
     * The vocabulary for every token count of the chat (Injection.token_count,
     * MessageInclusion.token_count, the threshold and the budget). Default
     * O200K_BASE. UNSPECIFIED or unknown: INVALID_ARGUMENT on
     * `settings.tokenizer`. HUGGING_FACE needs `tokenizer_name`
     * (INVALID_ARGUMENT on `settings.tokenizer_name` without one).
     *
     * @generated from field: optional recap.v1.Tokenizer tokenizer = 13;
     */
    tokenizer?: Tokenizer | undefined;
    /**
     * Auto-hide keeps this many scenes visible: with N visible scene breaks or
     * more, every message up to and including the N-th break from the end is
     * auto-hidden. Default 2; 0 disables auto-hide. Must be >= 0
     * (INVALID_ARGUMENT on `auto_hide_scene_count`).
     *
     * @generated from field: optional int32 auto_hide_scene_count = 14;
     */
    autoHideSceneCount?: number | undefined;
    /**
     * Whether `prefill` is put in front of a message's memory (a prefill
     * without memory is then the memory). Default false.
     *
     * @generated from field: optional bool show_prefill = 15;
     */
    showPrefill?: boolean | undefined;
    /**
     * Enabled state of a chat that has no SetChatEnabled value. Default true.
     *
     * @generated from field: optional bool default_chat_enabled = 16;
     */
    defaultChatEnabled?: boolean | undefined;
    /**
     * When true, `global_toggle_state` decides for every chat, ignoring
     * SetChatEnabled values and `default_chat_enabled`. Default false.
     *
     * @generated from field: optional bool use_global_toggle_state = 17;
     */
    useGlobalToggleState?: boolean | undefined;
    /**
     * The global on/off switch, used when `use_global_toggle_state` is true.
     * Default true.
     *
     * @generated from field: optional bool global_toggle_state = 18;
     */
    globalToggleState?: boolean | undefined;
    /**
     * Characters whose messages are excluded (group chats). Default empty.
     * Absent: unchanged; present (even with no keys): replaces the list.
     *
     * @generated from field: recap.v1.CharacterKeys disabled_character_keys = 19;
     */
    disabledCharacterKeys?: CharacterKeys | undefined;
    /**
     * Milliseconds of quiet before a debounced refresh runs (a burst of
     * debounced triggers makes one refresh). Default 300; 0..=3600000, else
     * INVALID_ARGUMENT on `debounce_ms`; 0 makes debounced triggers immediate.
     *
     * @generated from field: optional int64 debounce_ms = 20;
     */
    debounceMs?: bigint | undefined;
    /**
     * The message-recap tier: a second injection, key `auto_recap_messages`,
     * holding the recaps the inclusion pass includes (oldest first, one per
     * line) through `message_recaps_template`. Default false (off).
     *
     * @generated from field: optional bool message_recaps_enabled = 21;
     */
    messageRecapsEnabled?: boolean | undefined;
    /**
     * The tier's position. Default IN_CHAT.
     *
     * @generated from field: optional recap.v1.InjectionPosition message_recaps_position = 22;
     */
    messageRecapsPosition?: InjectionPosition | undefined;
    /**
     * The tier's depth, for IN_CHAT. Default 4; 0..=1000.
     *
     * @generated from field: optional int32 message_recaps_depth = 23;
     */
    messageRecapsDepth?: number | undefined;
    /**
     * The tier's role. Default SYSTEM.
     *
     * @generated from field: optional recap.v1.InjectionRole message_recaps_role = 24;
     */
    messageRecapsRole?: InjectionRole | undefined;
    /**
     * Whether World Info scans the tier. Default false.
     *
     * @generated from field: optional bool message_recaps_scan = 25;
     */
    messageRecapsScan?: boolean | undefined;
    /**
     * The tier's template: every `{{message_recaps}}` is replaced by the
     * included recaps; a blank template gives them raw; no included recap
     * gives empty text. Default "# Recent Events\n\n{{message_recaps}}".
     *
     * @generated from field: optional string message_recaps_template = 26;
     */
    messageRecapsTemplate?: string | undefined;
    /**
     * Look for a scene break after each new character message
     * (message_received) once the open scene has enough eligible messages.
     * Default true.
     *
     * @generated from field: optional bool auto_scene_break_detection = 27;
     */
    autoSceneBreakDetection?: boolean | undefined;
    /**
     * The newest this many visible messages of the open scene are never a
     * break. Default 8; 0..=1000.
     *
     * @generated from field: optional int32 scene_break_offset = 28;
     */
    sceneBreakOffset?: number | undefined;
    /**
     * A break needs at least this many visible messages before it in the open
     * scene. Default 10; 1..=1000.
     *
     * @generated from field: optional int32 scene_break_min_messages = 29;
     */
    sceneBreakMinMessages?: number | undefined;
    /**
     * Recap the scene of every break recapd finds. Default true.
     *
     * @generated from field: optional bool auto_scene_recap = 30;
     */
    autoSceneRecap?: boolean | undefined;
    /**
     * Merge every scene recap recapd writes into the running recap (a new
     * current version). Default true.
     *
     * @generated from field: optional bool auto_running_recap = 31;
     */
    autoRunningRecap?: boolean | undefined;
    /**
     * Recap each new message into its `memory`, `message_recap_lag` messages
     * behind the newest. Default false.
     *
     * @generated from field: optional bool auto_message_recaps = 32;
     */
    autoMessageRecaps?: boolean | undefined;
    /**
     * How many messages behind the newest a message is recapped. Default 1;
     * 0..=100.
     *
     * @generated from field: optional int32 message_recap_lag = 33;
     */
    messageRecapLag?: number | undefined;
    /**
     * The prompt of a scene-break detection; macros in the README. Default:
     * recapd's own prompt.
     *
     * @generated from field: optional string scene_break_prompt = 34;
     */
    sceneBreakPrompt?: string | undefined;
    /**
     * The prompt of a scene recap. Default: recapd's own prompt.
     *
     * @generated from field: optional string scene_recap_prompt = 35;
     */
    sceneRecapPrompt?: string | undefined;
    /**
     * The prompt of a running-recap merge. Default: recapd's own prompt.
     *
     * @generated from field: optional string running_recap_prompt = 36;
     */
    runningRecapPrompt?: string | undefined;
    /**
     * The prompt of a message recap. Default: recapd's own prompt.
     *
     * @generated from field: optional string message_recap_prompt = 37;
     */
    messageRecapPrompt?: string | undefined;
    /**
     * The model asked; empty (the default): the server's --llm-model.
     *
     * @generated from field: optional string llm_model = 38;
     */
    llmModel?: string | undefined;
    /**
     * The most tokens an answer may have (`max_tokens`). Default 1024;
     * 1..=1000000.
     *
     * @generated from field: optional int64 llm_max_tokens = 39;
     */
    llmMaxTokens?: bigint | undefined;
    /**
     * Sampling temperature, 0..=2 (kept to thousandths: 0.7004 is 0.7);
     * unset (the default): the model's own. Returned to unset with `clear`.
     *
     * @generated from field: optional double llm_temperature = 40;
     */
    llmTemperature?: number | undefined;
    /**
     * How a job asks for a JSON answer (the request's `response_format`).
     * Default AUTO. UNSPECIFIED or unknown: INVALID_ARGUMENT on
     * `settings.llm_structured_output`.
     *
     * @generated from field: optional recap.v1.StructuredOutput llm_structured_output = 41;
     */
    llmStructuredOutput?: StructuredOutput | undefined;
    /**
     * Which request field carries `llm_max_tokens`. Default AUTO.
     * UNSPECIFIED or unknown: INVALID_ARGUMENT on
     * `settings.llm_max_tokens_field`.
     *
     * @generated from field: optional recap.v1.MaxTokensField llm_max_tokens_field = 42;
     */
    llmMaxTokensField?: MaxTokensField | undefined;
    /**
     * A merge's answer is unusable when its new running recap has fewer
     * characters than this fraction of the version it builds on plus the
     * scene recap. Default 0.2; 0..=1 (kept to thousandths), else
     * INVALID_ARGUMENT on `settings.running_recap_min_ratio`; 0 turns the
     * check off.
     *
     * @generated from field: optional double running_recap_min_ratio = 43;
     */
    runningRecapMinRatio?: number | undefined;
    /**
     * RegenerateRunningRecap leaves out the newest this many scenes when the
     * chat has more (the extension's running_scene_recap_exclude_latest).
     * Merges of one scene do not hold any back; they record this value as
     * their version's `excluded_count`, as the extension does. Default 1;
     * 0..=100.
     *
     * @generated from field: optional int32 running_recap_exclude_latest = 85;
     */
    runningRecapExcludeLatest?: number | undefined;
    /**
     * How many messages of the chat, newest first, are scanned (an entry's own
     * `scanDepth` wins). Default 2; 0..=1000.
     *
     * @generated from field: optional int32 world_info_depth = 44;
     */
    worldInfoDepth?: number | undefined;
    /**
     * When fewer entries than this are active after a scan, it goes on one
     * message deeper, and again, up to `world_info_min_activations_depth_max`
     * (or the whole chat). Default 0 (off); 0..=100.
     *
     * @generated from field: optional int32 world_info_min_activations = 45;
     */
    worldInfoMinActivations?: number | undefined;
    /**
     * How deep `world_info_min_activations` may scan; 0 (the default): the
     * whole chat. 0..=100.
     *
     * @generated from field: optional int32 world_info_min_activations_depth_max = 46;
     */
    worldInfoMinActivationsDepthMax?: number | undefined;
    /**
     * The token budget of activated entries, in percent of
     * `max_context_tokens` (SillyTavern: round(percent * context / 100), at
     * least 1 token). Default 25; 1..=100.
     *
     * @generated from field: optional int32 world_info_budget = 47;
     */
    worldInfoBudget?: number | undefined;
    /**
     * The most tokens the budget may be; 0 (the default): no cap. 0..=65536.
     *
     * @generated from field: optional int32 world_info_budget_cap = 48;
     */
    worldInfoBudgetCap?: number | undefined;
    /**
     * Whether scanned messages carry their speaker's name ("name: text").
     * Default true.
     *
     * @generated from field: optional bool world_info_include_names = 49;
     */
    worldInfoIncludeNames?: boolean | undefined;
    /**
     * Whether activated entries' contents are scanned in turn, activating
     * more entries. Default false.
     *
     * @generated from field: optional bool world_info_recursive = 50;
     */
    worldInfoRecursive?: boolean | undefined;
    /**
     * Whether keys match case-sensitively, for entries that do not say.
     * Default false.
     *
     * @generated from field: optional bool world_info_case_sensitive = 51;
     */
    worldInfoCaseSensitive?: boolean | undefined;
    /**
     * Whether one-word keys match whole words only, for entries that do not
     * say. Default false.
     *
     * @generated from field: optional bool world_info_match_whole_words = 52;
     */
    worldInfoMatchWholeWords?: boolean | undefined;
    /**
     * Whether inclusion groups keep only their best-scoring members, for
     * entries that do not say. Default false.
     *
     * @generated from field: optional bool world_info_use_group_scoring = 53;
     */
    worldInfoUseGroupScoring?: boolean | undefined;
    /**
     * How character and global books are ordered. Default CHARACTER_FIRST.
     * UNSPECIFIED or unknown: INVALID_ARGUMENT on
     * `settings.world_info_character_strategy`.
     *
     * @generated from field: optional recap.v1.WorldInfoCharacterStrategy world_info_character_strategy = 54;
     */
    worldInfoCharacterStrategy?: WorldInfoCharacterStrategy | undefined;
    /**
     * The most scan passes (recursion included); 0 (the default): no limit.
     * 0..=10.
     *
     * @generated from field: optional int32 world_info_max_recursion_steps = 55;
     */
    worldInfoMaxRecursionSteps?: number | undefined;
    /**
     * The global lorebooks, by name (SillyTavern's selected World Info).
     * Default empty. Absent: unchanged; present (even empty): replaces the
     * list. At most 1000 names, each a valid book name (see Lorebook.name;
     * INVALID_ARGUMENT on `settings.world_info_global_books[i]`). A name
     * without a stored book is kept and simply applies nothing.
     *
     * @generated from field: optional recap.v1.StringList world_info_global_books = 56;
     */
    worldInfoGlobalBooks?: StringList | undefined;
    /**
     * The character's lorebooks (its own book, then its extra books).
     * Default empty; as `world_info_global_books`.
     *
     * @generated from field: optional recap.v1.StringList world_info_character_books = 57;
     */
    worldInfoCharacterBooks?: StringList | undefined;
    /**
     * The chat's own lorebook (SillyTavern's `chat_metadata.world_info`;
     * ImportChat sets it as the chat's override and ExportChat writes it
     * back). Empty (the default): none. Otherwise a valid book name.
     *
     * @generated from field: optional string world_info_chat_book = 58;
     */
    worldInfoChatBook?: string | undefined;
    /**
     * The persona's lorebook (SillyTavern's persona description lorebook).
     * Empty (the default): none. Otherwise a valid book name.
     *
     * @generated from field: optional string world_info_persona_book = 59;
     */
    worldInfoPersonaBook?: string | undefined;
    /**
     * ---- Lorebook entries recapd writes (docs/lore.md).
     * Whether each scene recap recapd writes queues its lore extraction
     * (JOB_KIND_LORE_EXTRACT). Default false.
     *
     * @generated from field: optional bool auto_lore = 60;
     */
    autoLore?: boolean | undefined;
    /**
     * The extraction prompt. Macros: {{scene_messages}}, {{scene_recap}},
     * {{lore_entity_types}}, {{user}}, {{char}}. Default: recapd's own.
     *
     * @generated from field: optional string lore_extract_prompt = 61;
     */
    loreExtractPrompt?: string | undefined;
    /**
     * The resolution prompt (which entry an entity already has). Macros:
     * {{entity_type}}, {{entity_name}}, {{entity}}, {{lore_registry}},
     * {{scene_recap}}, {{user}}, {{char}}. Default: recapd's own.
     *
     * @generated from field: optional string lore_resolve_prompt = 62;
     */
    loreResolvePrompt?: string | undefined;
    /**
     * The merge prompt. Macros: {{entity_type}}, {{entity_name}}, {{entity}},
     * {{entry}}, {{scene_recap}}, {{user}}, {{char}}. Default: recapd's own.
     *
     * @generated from field: optional string lore_merge_prompt = 63;
     */
    loreMergePrompt?: string | undefined;
    /**
     * The compaction prompt. Macros: {{entity_type}}, {{entity_name}},
     * {{entry}}, {{user}}, {{char}}. Default: recapd's own.
     *
     * @generated from field: optional string lore_compact_prompt = 64;
     */
    loreCompactPrompt?: string | undefined;
    /**
     * The entity types extraction may answer, in the order the prompt lists
     * them, each `<name>: <description>` or `<name>(constant): <description>`
     * (entries of a constant type are always in the prompt). Names: 1 to 32
     * lowercase ASCII letters, digits or `_`, unique; 1 to 32 types;
     * descriptions one line of at most 300 characters (INVALID_ARGUMENT on
     * `settings.lore_entity_types[i]`). Default: character, location, item,
     * faction, lore, event, document, rule(constant).
     *
     * @generated from field: optional recap.v1.StringList lore_entity_types = 65;
     */
    loreEntityTypes?: StringList | undefined;
    /**
     * The name of the book recapd creates for a chat; {{char}}, {{user}}
     * and {{chat}} (the chat's id) are replaced. Default
     * "recapd lore - {{char}} - {{chat}}".
     *
     * @generated from field: optional string lore_book_name_template = 66;
     */
    loreBookNameTemplate?: string | undefined;
    /**
     * An entry recapd writes is compacted (JOB_KIND_LORE_COMPACT) once its
     * content has more tokens than this (the chat's tokenizer). 0 turns
     * compaction off. 0..=100000; default 1000.
     *
     * @generated from field: optional int32 lore_compaction_threshold = 67;
     */
    loreCompactionThreshold?: number | undefined;
    /**
     * The most entries the chat's book may hold: new entities past it are
     * not written (the job's result says so). 1..=100000; default 500.
     *
     * @generated from field: optional int32 lore_max_entries = 68;
     */
    loreMaxEntries?: number | undefined;
    /**
     * The most keys an entry recapd writes has. 1..=100; default 10.
     *
     * @generated from field: optional int32 lore_max_keys = 69;
     */
    loreMaxKeys?: number | undefined;
    /**
     * Whether the book recapd creates for a chat starts with copies of the
     * entries of the books that apply to the chat (global, character,
     * persona). Default false.
     *
     * @generated from field: optional bool lore_seed_from_active_books = 70;
     */
    loreSeedFromActiveBooks?: boolean | undefined;
    /**
     * Whether DeleteChat (and retention) deletes the book recapd created for
     * the chat. Default true.
     *
     * @generated from field: optional bool lore_delete_book_with_chat = 71;
     */
    loreDeleteBookWithChat?: boolean | undefined;
    /**
     * ---- Recall: passages of the chat's history found again (the recall
     * tier, key `auto_recap_recall`, and RecallService).
     * Whether the recall tier is injected (and the chat's passages indexed
     * for it). Default false.
     *
     * @generated from field: optional bool recall_enabled = 72;
     */
    recallEnabled?: boolean | undefined;
    /**
     * How many of the latest messages (not hidden by hand) make the tier's
     * query. Default 2; 1..=100.
     *
     * @generated from field: optional int32 recall_query_messages = 73;
     */
    recallQueryMessages?: number | undefined;
    /**
     * Passages of the latest this many messages not hidden by hand are
     * never recalled (the prompt has them). Default 10; 0..=100000.
     *
     * @generated from field: optional int32 recall_exclude_recent = 74;
     */
    recallExcludeRecent?: number | undefined;
    /**
     * The most tokens of passages the tier injects (counted with the chat's
     * tokenizer). Default 500; 0..=100000.
     *
     * @generated from field: optional int32 recall_max_tokens = 75;
     */
    recallMaxTokens?: number | undefined;
    /**
     * Passages whose fused score is lower are not recalled (1.0: first in
     * every ranking). Default 0; 0..=1.
     *
     * @generated from field: optional double recall_min_score = 76;
     */
    recallMinScore?: number | undefined;
    /**
     * The tier's template; `{{recall}}` is replaced by the passages, best
     * first, one per paragraph. Default: recapd's own.
     *
     * @generated from field: optional string recall_template = 77;
     */
    recallTemplate?: string | undefined;
    /**
     * The tier's position. Default IN_CHAT.
     *
     * @generated from field: optional recap.v1.InjectionPosition recall_position = 78;
     */
    recallPosition?: InjectionPosition | undefined;
    /**
     * The tier's depth, for IN_CHAT. Default 2; 0..=1000.
     *
     * @generated from field: optional int32 recall_depth = 79;
     */
    recallDepth?: number | undefined;
    /**
     * The tier's role. Default SYSTEM.
     *
     * @generated from field: optional recap.v1.InjectionRole recall_role = 80;
     */
    recallRole?: InjectionRole | undefined;
    /**
     * Whether World Info scans the tier. Default false.
     *
     * @generated from field: optional bool recall_scan = 81;
     */
    recallScan?: boolean | undefined;
    /**
     * The longest passage a message (or scene recap) is cut into, in
     * characters, on sentence boundaries. Default 1000; 50..=100000.
     *
     * @generated from field: optional int32 recall_chunk_chars = 82;
     */
    recallChunkChars?: number | undefined;
    /**
     * A passage enters the vector ranking only with at least this cosine
     * similarity to the query. Default 0.25; 0..=1.
     *
     * @generated from field: optional double recall_min_similarity = 83;
     */
    recallMinSimilarity?: number | undefined;
    /**
     * Other chats of the tenant whose passages this chat's recall also
     * searches (for continuity into a new chat); default none. At most 100
     * ids, each a valid chat id; duplicates dropped.
     *
     * @generated from field: optional recap.v1.StringList recall_chats = 84;
     */
    recallChats?: StringList | undefined;
    /**
     * The tokenizer TOKENIZER_HUGGING_FACE counts with: the file stem of a
     * `tokenizer.json` in the server's --tokenizers-dir (`llama-3` reads
     * `llama-3.json`). Default empty (none). At most 128 bytes of ASCII
     * letters, digits, '.', '_', '-' and '+', not starting with '.' and
     * without ".." (INVALID_ARGUMENT on `settings.tokenizer_name`). An update
     * that sets `tokenizer` or `tokenizer_name` while the effective tokenizer
     * is HUGGING_FACE loads the file: a server without --tokenizers-dir is
     * FAILED_PRECONDITION; a file that is missing, unreadable, over the
     * server's size limit or not a tokenizer is INVALID_ARGUMENT on
     * `settings.tokenizer_name`. A file gone later (or unreadable after a
     * restart) makes the chat count with O200K_BASE, logged as a warning.
     *
     * @generated from field: optional string tokenizer_name = 86;
     */
    tokenizerName?: string | undefined;
    /**
     * The settings profile (see SettingsService.PutProfile). A chat's own
     * value names the profile it uses, before its group's and its
     * character's bindings; an empty value means no profile at all. In the
     * global settings: the tenant's default profile, used when nothing else
     * names one. In a chat's effective settings (GetSettings): the profile
     * that applied, absent when none did. A name naming no profile is passed
     * over. Default unset. Empty, or the id rules (INVALID_ARGUMENT on
     * `settings.profile`); never set inside a profile.
     *
     * @generated from field: optional string profile = 87;
     */
    profile?: string | undefined;
};
/**
 * Describes the message recap.v1.Settings.
 * Use `create(SettingsSchema)` to create a new message.
 */
export declare const SettingsSchema: GenMessage<Settings>;
/**
 * GetSettings's request.
 *
 * @generated from message recap.v1.GetSettingsRequest
 */
export type GetSettingsRequest = Message$1<"recap.v1.GetSettingsRequest"> & {
    /**
     * Empty: the global settings; otherwise the chat's effective settings.
     * A non-empty id must follow the id rules (INVALID_ARGUMENT); it need not
     * be known (a chat without events answers its effective settings).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
};
/**
 * Describes the message recap.v1.GetSettingsRequest.
 * Use `create(GetSettingsRequestSchema)` to create a new message.
 */
export declare const GetSettingsRequestSchema: GenMessage<GetSettingsRequest>;
/**
 * UpdateSettings's request.
 *
 * @generated from message recap.v1.UpdateSettingsRequest
 */
export type UpdateSettingsRequest = Message$1<"recap.v1.UpdateSettingsRequest"> & {
    /**
     * Empty: the global settings; otherwise the chat's overrides.
     * A non-empty id must follow the id rules (INVALID_ARGUMENT); it need not
     * be known (a backend may configure a chat before it opens it).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * The fields to set; only present fields change. Absent: nothing is set.
     *
     * @generated from field: recap.v1.Settings settings = 2;
     */
    settings?: Settings | undefined;
    /**
     * Field names (as in Settings) to return to their default (global) or to
     * stop overriding (chat) before `settings` is applied.
     * E.g. "depth". An unknown name is INVALID_ARGUMENT on `clear`.
     *
     * @generated from field: repeated string clear = 3;
     */
    clear: string[];
};
/**
 * Describes the message recap.v1.UpdateSettingsRequest.
 * Use `create(UpdateSettingsRequestSchema)` to create a new message.
 */
export declare const UpdateSettingsRequestSchema: GenMessage<UpdateSettingsRequest>;
/**
 * SetChatEnabled's request.
 * Imports ST-Auto-Recap's settings object.
 *
 * @generated from message recap.v1.ImportSettingsRequest
 */
export type ImportSettingsRequest = Message$1<"recap.v1.ImportSettingsRequest"> & {
    /**
     * Empty: the global settings; otherwise the chat's overrides.
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * The extension's settings object as JSON text, for example
     * {"running_scene_recap_position": 2, "running_scene_recap_depth": 2, ...}.
     * Read as SillyTavern saves it: a key given as null clears its setting
     * (as if named in UpdateSettingsRequest.clear); numbers and booleans
     * written as strings ("2", "true") are read as such;
     * a message_recap_context_type other than "percent" (the extension's
     * "tokens") is ABSOLUTE; a negative auto_hide_scene_count is 0.
     * "chats_enabled" (chat ids, as `recapd import` names chats, to true or
     * false) sets each chat's own enabled state in the caller's tenant (as
     * SetChatEnabled does while use_global_toggle_state is off, whatever that
     * setting is here); with a non-empty chat_id only that chat's entry
     * applies. It never changes global_toggle_state. The settings are
     * committed before the chats' states: after ABORTED or UNAVAILABLE part
     * of an import may be applied, and retrying it is safe.
     * Any other value that cannot be read is INVALID_ARGUMENT naming the key
     * (e.g. "json.running_scene_recap_depth"), and nothing changes.
     * SillyTavern's own World Info settings are read too, from its
     * settings.json whole or its `world_info_settings` object alone:
     * `world_info_settings.world_info_*` set the `world_info_*` settings,
     * `world_info_settings.world_info.globalSelect` sets
     * `world_info_global_books`, `power_user.persona_description_lorebook`
     * sets `world_info_persona_book` (see docs/settings.md).
     *
     * @generated from field: string json = 2;
     */
    json: string;
};
/**
 * Describes the message recap.v1.ImportSettingsRequest.
 * Use `create(ImportSettingsRequestSchema)` to create a new message.
 */
export declare const ImportSettingsRequestSchema: GenMessage<ImportSettingsRequest>;
/**
 * What an import set and what it left out.
 *
 * @generated from message recap.v1.ImportSettingsResponse
 */
export type ImportSettingsResponse = Message$1<"recap.v1.ImportSettingsResponse"> & {
    /**
     * The resulting global settings, or the chat's effective settings.
     *
     * @generated from field: recap.v1.Settings settings = 1;
     */
    settings?: Settings | undefined;
    /**
     * Keys of the object recapd does not use (profiles, prompts of features
     * recapd does not have, UI state, disabled_group_characters), sorted;
     * members of SillyTavern's objects recapd reads part of as
     * "object.member" ("power_user.persona_description").
     *
     * @generated from field: repeated string ignored_keys = 2;
     */
    ignoredKeys: string[];
};
/**
 * Describes the message recap.v1.ImportSettingsResponse.
 * Use `create(ImportSettingsResponseSchema)` to create a new message.
 */
export declare const ImportSettingsResponseSchema: GenMessage<ImportSettingsResponse>;
/**
 * @generated from message recap.v1.SetChatEnabledRequest
 */
export type SetChatEnabledRequest = Message$1<"recap.v1.SetChatEnabledRequest"> & {
    /**
     * Required (empty is INVALID_ARGUMENT); id rules apply. Need not be known.
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * While the chat's (effective) `use_global_toggle_state` is false: the
     * chat's own enabled state (replaces `default_chat_enabled` for it).
     * While it is true: the tenant's global `global_toggle_state` is set to
     * this value instead (as the extension's toggle does; the chat's own
     * state is left as it was) and every chat is refreshed, as after an
     * UpdateSettings of that setting. A chat that overrides
     * `global_toggle_state` itself has that override set instead, so the
     * call changes the switch the chat follows and no other chat's.
     *
     * @generated from field: bool enabled = 2;
     */
    enabled: boolean;
};
/**
 * Describes the message recap.v1.SetChatEnabledRequest.
 * Use `create(SetChatEnabledRequestSchema)` to create a new message.
 */
export declare const SetChatEnabledRequestSchema: GenMessage<SetChatEnabledRequest>;
/**
 * SetChatEnabled's answer.
 *
 * @generated from message recap.v1.SetChatEnabledResponse
 */
export type SetChatEnabledResponse = Message$1<"recap.v1.SetChatEnabledResponse"> & {
    /**
     * Whether memory is now enabled for the chat.
     *
     * @generated from field: bool enabled = 1;
     */
    enabled: boolean;
    /**
     * The chat's injection revision after the refresh (0 for a chat not yet known).
     *
     * @generated from field: uint64 revision = 2;
     */
    revision: bigint;
};
/**
 * Describes the message recap.v1.SetChatEnabledResponse.
 * Use `create(SetChatEnabledResponseSchema)` to create a new message.
 */
export declare const SetChatEnabledResponseSchema: GenMessage<SetChatEnabledResponse>;
/**
 * A named settings patch of the tenant (answered by PutProfile and
 * GetProfile).
 *
 * @generated from message recap.v1.Profile
 */
export type Profile = Message$1<"recap.v1.Profile"> & {
    /**
     * Its name: the id rules (non-empty, at most 256 bytes, no control
     * characters).
     *
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * Its settings: the present fields are laid over the global settings for
     * the chats that use it. `profile` must be absent.
     *
     * @generated from field: recap.v1.Settings settings = 2;
     */
    settings?: Settings | undefined;
};
/**
 * Describes the message recap.v1.Profile.
 * Use `create(ProfileSchema)` to create a new message.
 */
export declare const ProfileSchema: GenMessage<Profile>;
/**
 * PutProfile's request.
 *
 * @generated from message recap.v1.PutProfileRequest
 */
export type PutProfileRequest = Message$1<"recap.v1.PutProfileRequest"> & {
    /**
     * The profile's name (id rules).
     *
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * Its settings (only present fields are kept; `profile` must be absent).
     *
     * @generated from field: recap.v1.Settings settings = 2;
     */
    settings?: Settings | undefined;
};
/**
 * Describes the message recap.v1.PutProfileRequest.
 * Use `create(PutProfileRequestSchema)` to create a new message.
 */
export declare const PutProfileRequestSchema: GenMessage<PutProfileRequest>;
/**
 * GetProfile's request.
 *
 * @generated from message recap.v1.GetProfileRequest
 */
export type GetProfileRequest = Message$1<"recap.v1.GetProfileRequest"> & {
    /**
     * @generated from field: string name = 1;
     */
    name: string;
};
/**
 * Describes the message recap.v1.GetProfileRequest.
 * Use `create(GetProfileRequestSchema)` to create a new message.
 */
export declare const GetProfileRequestSchema: GenMessage<GetProfileRequest>;
/**
 * ListProfiles' request.
 *
 * @generated from message recap.v1.ListProfilesRequest
 */
export type ListProfilesRequest = Message$1<"recap.v1.ListProfilesRequest"> & {};
/**
 * Describes the message recap.v1.ListProfilesRequest.
 * Use `create(ListProfilesRequestSchema)` to create a new message.
 */
export declare const ListProfilesRequestSchema: GenMessage<ListProfilesRequest>;
/**
 * ListProfiles' answer.
 *
 * @generated from message recap.v1.ListProfilesResponse
 */
export type ListProfilesResponse = Message$1<"recap.v1.ListProfilesResponse"> & {
    /**
     * Every profile of the tenant (at most 100), ordered by name.
     *
     * @generated from field: repeated recap.v1.Profile profiles = 1;
     */
    profiles: Profile[];
    /**
     * Character key to the profile bound to it.
     *
     * @generated from field: map<string, string> character_profiles = 2;
     */
    characterProfiles: {
        [key: string]: string;
    };
    /**
     * Group id to the profile bound to it.
     *
     * @generated from field: map<string, string> group_profiles = 3;
     */
    groupProfiles: {
        [key: string]: string;
    };
};
/**
 * Describes the message recap.v1.ListProfilesResponse.
 * Use `create(ListProfilesResponseSchema)` to create a new message.
 */
export declare const ListProfilesResponseSchema: GenMessage<ListProfilesResponse>;
/**
 * DeleteProfile's request.
 *
 * @generated from message recap.v1.DeleteProfileRequest
 */
export type DeleteProfileRequest = Message$1<"recap.v1.DeleteProfileRequest"> & {
    /**
     * @generated from field: string name = 1;
     */
    name: string;
};
/**
 * Describes the message recap.v1.DeleteProfileRequest.
 * Use `create(DeleteProfileRequestSchema)` to create a new message.
 */
export declare const DeleteProfileRequestSchema: GenMessage<DeleteProfileRequest>;
/**
 * DeleteProfile's answer.
 *
 * @generated from message recap.v1.DeleteProfileResponse
 */
export type DeleteProfileResponse = Message$1<"recap.v1.DeleteProfileResponse"> & {};
/**
 * Describes the message recap.v1.DeleteProfileResponse.
 * Use `create(DeleteProfileResponseSchema)` to create a new message.
 */
export declare const DeleteProfileResponseSchema: GenMessage<DeleteProfileResponse>;
/**
 * BindProfile's request.
 *
 * @generated from message recap.v1.BindProfileRequest
 */
export type BindProfileRequest = Message$1<"recap.v1.BindProfileRequest"> & {
    /**
     * What the profile is bound to (required; id rules).
     *
     * @generated from oneof recap.v1.BindProfileRequest.target
     */
    target: {
        /**
         * A character (SillyTavern's avatar file name): its chats use the
         * profile unless they name their own or their group has one bound.
         *
         * @generated from field: string character_key = 1;
         */
        value: string;
        case: "characterKey";
    } | {
        /**
         * A group: its chats use the profile unless they name their own.
         *
         * @generated from field: string group_id = 2;
         */
        value: string;
        case: "groupId";
    } | {
        case: undefined;
        value?: undefined;
    };
    /**
     * The profile; empty unbinds.
     *
     * @generated from field: string profile = 3;
     */
    profile: string;
};
/**
 * Describes the message recap.v1.BindProfileRequest.
 * Use `create(BindProfileRequestSchema)` to create a new message.
 */
export declare const BindProfileRequestSchema: GenMessage<BindProfileRequest>;
/**
 * BindProfile's answer.
 *
 * @generated from message recap.v1.BindProfileResponse
 */
export type BindProfileResponse = Message$1<"recap.v1.BindProfileResponse"> & {};
/**
 * Describes the message recap.v1.BindProfileResponse.
 * Use `create(BindProfileResponseSchema)` to create a new message.
 */
export declare const BindProfileResponseSchema: GenMessage<BindProfileResponse>;
/**
 * A group chat's group, as recapd keeps it.
 *
 * @generated from message recap.v1.Group
 */
export type Group = Message$1<"recap.v1.Group"> & {
    /**
     * Its id (SillyTavern's `groups/<id>.json` `id`).
     *
     * @generated from field: string id = 1;
     */
    id: string;
    /**
     * Its display name.
     *
     * @generated from field: string name = 2;
     */
    name: string;
    /**
     * Its members' character keys (avatar file names).
     *
     * @generated from field: repeated string members = 3;
     */
    members: string[];
    /**
     * Members whose messages its chats leave out (excluded_reason
     * "disabled_group_member"); their one-on-one chats are not affected.
     *
     * @generated from field: repeated string disabled_members = 4;
     */
    disabledMembers: string[];
    /**
     * Its chats' ids: each is in the group (also a chat imported later).
     *
     * @generated from field: repeated string chats = 5;
     */
    chats: string[];
    /**
     * The profile bound to it; empty for none.
     *
     * @generated from field: string profile = 6;
     */
    profile: string;
};
/**
 * Describes the message recap.v1.Group.
 * Use `create(GroupSchema)` to create a new message.
 */
export declare const GroupSchema: GenMessage<Group>;
/**
 * ImportGroup's request.
 *
 * @generated from message recap.v1.ImportGroupRequest
 */
export type ImportGroupRequest = Message$1<"recap.v1.ImportGroupRequest"> & {
    /**
     * SillyTavern's `groups/<id>.json` as text (at most 4 MiB). Its `id`,
     * `name`, `members`, `disabled_members` and `chats` are read (other
     * members are ignored); each list holds strings following the id rules,
     * at most 1000 members and 10000 chats; repeats are dropped.
     *
     * @generated from field: string json = 1;
     */
    json: string;
};
/**
 * Describes the message recap.v1.ImportGroupRequest.
 * Use `create(ImportGroupRequestSchema)` to create a new message.
 */
export declare const ImportGroupRequestSchema: GenMessage<ImportGroupRequest>;
/**
 * GetGroup's request.
 *
 * @generated from message recap.v1.GetGroupRequest
 */
export type GetGroupRequest = Message$1<"recap.v1.GetGroupRequest"> & {
    /**
     * @generated from field: string group_id = 1;
     */
    groupId: string;
};
/**
 * Describes the message recap.v1.GetGroupRequest.
 * Use `create(GetGroupRequestSchema)` to create a new message.
 */
export declare const GetGroupRequestSchema: GenMessage<GetGroupRequest>;
/**
 * ListGroups' request.
 *
 * @generated from message recap.v1.ListGroupsRequest
 */
export type ListGroupsRequest = Message$1<"recap.v1.ListGroupsRequest"> & {};
/**
 * Describes the message recap.v1.ListGroupsRequest.
 * Use `create(ListGroupsRequestSchema)` to create a new message.
 */
export declare const ListGroupsRequestSchema: GenMessage<ListGroupsRequest>;
/**
 * ListGroups' answer.
 *
 * @generated from message recap.v1.ListGroupsResponse
 */
export type ListGroupsResponse = Message$1<"recap.v1.ListGroupsResponse"> & {
    /**
     * Every group of the tenant (at most 1000), ordered by id.
     *
     * @generated from field: repeated recap.v1.Group groups = 1;
     */
    groups: Group[];
};
/**
 * Describes the message recap.v1.ListGroupsResponse.
 * Use `create(ListGroupsResponseSchema)` to create a new message.
 */
export declare const ListGroupsResponseSchema: GenMessage<ListGroupsResponse>;
/**
 * SetGroupMembers' request.
 *
 * @generated from message recap.v1.SetGroupMembersRequest
 */
export type SetGroupMembersRequest = Message$1<"recap.v1.SetGroupMembersRequest"> & {
    /**
     * The group (id rules); created, with nothing else, when unknown.
     *
     * @generated from field: string group_id = 1;
     */
    groupId: string;
    /**
     * Replaces its disabled members (character keys, id rules, at most 1000;
     * repeats dropped).
     *
     * @generated from field: repeated string disabled_members = 2;
     */
    disabledMembers: string[];
};
/**
 * Describes the message recap.v1.SetGroupMembersRequest.
 * Use `create(SetGroupMembersRequestSchema)` to create a new message.
 */
export declare const SetGroupMembersRequestSchema: GenMessage<SetGroupMembersRequest>;
/**
 * The result of one refresh: what to inject and where.
 * A refresh: auto-hide; a disabled chat gets empty text at IN_PROMPT, depth
 * 0, SYSTEM, no scan; otherwise the template applied to the current running
 * recap at the configured place.
 *
 * @generated from message recap.v1.Injection
 */
export type Injection = Message$1<"recap.v1.Injection"> & {
    /**
     * The chat.
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * The extension-prompt key to register the injection under:
     * "auto_recap_scene" (the running recap), or a tier's own key when it is
     * on ("auto_recap_messages", "auto_recap_recall"). Each key counts its
     * own revisions.
     *
     * @generated from field: string key = 2;
     */
    key: string;
    /**
     * The text to inject; empty means inject nothing (chat disabled, no
     * current running-recap version, or empty content).
     *
     * @generated from field: string text = 3;
     */
    text: string;
    /**
     * Where `text` goes: the `position` setting, IN_PROMPT when disabled.
     *
     * @generated from field: recap.v1.InjectionPosition position = 4;
     */
    position: InjectionPosition;
    /**
     * For IN_CHAT: messages from the end; the `depth` setting (0..=1000), 0
     * when disabled.
     *
     * @generated from field: int32 depth = 5;
     */
    depth: number;
    /**
     * The role of the injected message: the `role` setting, SYSTEM when
     * disabled.
     *
     * @generated from field: recap.v1.InjectionRole role = 6;
     */
    role: InjectionRole;
    /**
     * Whether World Info scans `text`: the `scan` setting, false when
     * disabled.
     *
     * @generated from field: bool scan = 7;
     */
    scan: boolean;
    /**
     * Whether memory was enabled for the chat at this refresh:
     * use_global_toggle_state ? global_toggle_state : (SetChatEnabled value ??
     * default_chat_enabled).
     *
     * @generated from field: bool enabled = 8;
     */
    enabled: boolean;
    /**
     * +1 per refresh of the chat; 0 = never refreshed.
     * The first refresh is 1; never goes back, also across restarts. A chat
     * re-created after DeleteChat starts at the deleted chat's last revision
     * (its `deleted` injection's) and goes on from there.
     *
     * @generated from field: uint64 revision = 9;
     */
    revision: bigint;
    /**
     * The running-recap version whose content made `text`; unset when `text`
     * is empty.
     *
     * @generated from field: optional uint32 running_recap_version = 10;
     */
    runningRecapVersion?: number | undefined;
    /**
     * Tokens of `text` with the chat's tokenizer.
     * 0 when `text` is empty.
     *
     * @generated from field: uint32 token_count = 11;
     */
    tokenCount: number;
    /**
     * Length of the chat prefix that auto-hide hides.
     * Counted from the oldest message, whether or not some of those messages
     * are also hidden by hand; 0 when auto-hide hides nothing. Computed also
     * for disabled chats.
     *
     * @generated from field: uint32 auto_hidden_count = 12;
     */
    autoHiddenCount: number;
    /**
     * What caused this refresh; UNSPECIFIED only before the chat's first
     * refresh (revision 0, or a re-created chat's starting revision).
     *
     * @generated from field: recap.v1.RefreshTrigger trigger = 13;
     */
    trigger: RefreshTrigger;
    /**
     * When the refresh ran (server clock, UTC, millisecond precision); unset
     * before the chat's first refresh.
     *
     * @generated from field: google.protobuf.Timestamp refreshed_at = 14;
     */
    refreshedAt?: Timestamp | undefined;
    /**
     * The chat was deleted (DeleteChat, --chat-retention): this is its last
     * injection, with empty text, trigger CHAT_DELETED and the revision after
     * the chat's latest. A later event creates the chat again, with
     * revisions above this one.
     *
     * @generated from field: bool deleted = 15;
     */
    deleted: boolean;
};
/**
 * Describes the message recap.v1.Injection.
 * Use `create(InjectionSchema)` to create a new message.
 */
export declare const InjectionSchema: GenMessage<Injection>;
/**
 * GetInjection's request.
 *
 * @generated from message recap.v1.GetInjectionRequest
 */
export type GetInjectionRequest = Message$1<"recap.v1.GetInjectionRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise); id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * Which injection: `auto_recap_scene` (the default, when unset or empty),
     * `auto_recap_messages` (the message-recap tier) or `auto_recap_recall`
     * (the recall tier); any other key is INVALID_ARGUMENT.
     *
     * @generated from field: optional string key = 2;
     */
    key?: string | undefined;
};
/**
 * Describes the message recap.v1.GetInjectionRequest.
 * Use `create(GetInjectionRequestSchema)` to create a new message.
 */
export declare const GetInjectionRequestSchema: GenMessage<GetInjectionRequest>;
/**
 * Refresh's request.
 *
 * @generated from message recap.v1.RefreshRequest
 */
export type RefreshRequest = Message$1<"recap.v1.RefreshRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise); id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
};
/**
 * Describes the message recap.v1.RefreshRequest.
 * Use `create(RefreshRequestSchema)` to create a new message.
 */
export declare const RefreshRequestSchema: GenMessage<RefreshRequest>;
/**
 * GetInclusion's request.
 *
 * @generated from message recap.v1.GetInclusionRequest
 */
export type GetInclusionRequest = Message$1<"recap.v1.GetInclusionRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise); id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
};
/**
 * Describes the message recap.v1.GetInclusionRequest.
 * Use `create(GetInclusionRequestSchema)` to create a new message.
 */
export declare const GetInclusionRequestSchema: GenMessage<GetInclusionRequest>;
/**
 * Whether one message's recap is in the short-term memory, as the
 * inclusion pass computes it now (newest to oldest, first rule that hits).
 *
 * @generated from message recap.v1.MessageInclusion
 */
export type MessageInclusion = Message$1<"recap.v1.MessageInclusion"> & {
    /**
     * The message.
     *
     * @generated from field: string message_id = 1;
     */
    messageId: string;
    /**
     * True when its memory fits in the short-term memory budget
     * (`excluded_reason` is then empty).
     *
     * @generated from field: bool included = 2;
     */
    included: boolean;
    /**
     * Hidden by hand or by auto-hide.
     *
     * @generated from field: bool hidden = 3;
     */
    hidden: boolean;
    /**
     * Tokens of the message's text.
     * (Its current swipe's text, with the chat's tokenizer; not its memory.)
     *
     * @generated from field: uint32 token_count = 4;
     */
    tokenCount: number;
    /**
     * Empty when included; otherwise the rule (or the budget) that left it out.
     * One of: "is_auto_recap_system_memory", "exclude",
     * "include_user_messages", "is_thoughts", "include_system_messages" (the
     * message is hidden), "include_narrator_messages",
     * "disabled_character_keys", "disabled_group_member" (its
     * `character_key` is a disabled member of the chat's group; see
     * SettingsService.ImportGroup), "message_length_threshold", "no_memory"
     * (eligible but no non-empty memory), "token_limit" (its memory would
     * exceed the budget, or a newer one already did).
     *
     * @generated from field: string excluded_reason = 5;
     */
    excludedReason: string;
};
/**
 * Describes the message recap.v1.MessageInclusion.
 * Use `create(MessageInclusionSchema)` to create a new message.
 */
export declare const MessageInclusionSchema: GenMessage<MessageInclusion>;
/**
 * GetInclusion's answer.
 *
 * @generated from message recap.v1.GetInclusionResponse
 */
export type GetInclusionResponse = Message$1<"recap.v1.GetInclusionResponse"> & {
    /**
     * One per message, in chat order.
     * Oldest first; empty for a chat without messages.
     *
     * @generated from field: repeated recap.v1.MessageInclusion messages = 1;
     */
    messages: MessageInclusion[];
};
/**
 * Describes the message recap.v1.GetInclusionResponse.
 * Use `create(GetInclusionResponseSchema)` to create a new message.
 */
export declare const GetInclusionResponseSchema: GenMessage<GetInclusionResponse>;
/**
 * Subscribe's request.
 *
 * @generated from message recap.v1.SubscribeRequest
 */
export type SubscribeRequest = Message$1<"recap.v1.SubscribeRequest"> & {
    /**
     * Empty: every chat, live updates only.
     * Otherwise each id must follow the id rules (INVALID_ARGUMENT on
     * `chat_ids[i]`); duplicates are ignored; ids without events yet are
     * accepted (their updates start with their first refresh).
     *
     * @generated from field: repeated string chat_ids = 1;
     */
    chatIds: string[];
    /**
     * > 0: the stream ends after this many messages.
     * 0 (the default): no limit.
     *
     * @generated from field: uint32 max_updates = 2;
     */
    maxUpdates: number;
};
/**
 * Describes the message recap.v1.SubscribeRequest.
 * Use `create(SubscribeRequestSchema)` to create a new message.
 */
export declare const SubscribeRequestSchema: GenMessage<SubscribeRequest>;
/**
 * One message of a prompt's history or output.
 *
 * @generated from message recap.v1.PromptMessage
 */
export type PromptMessage = Message$1<"recap.v1.PromptMessage"> & {
    /**
     * Who speaks; UNSPECIFIED is INVALID_ARGUMENT in requests.
     *
     * @generated from field: recap.v1.InjectionRole role = 1;
     */
    role: InjectionRole;
    /**
     * The speaker's name. Injected user and assistant messages carry the name
     * of the latest visible history message of their role; system ones none.
     *
     * @generated from field: string name = 2;
     */
    name: string;
    /**
     * The text (limited by --max-text-bytes).
     *
     * @generated from field: string content = 3;
     */
    content: string;
    /**
     * Hidden from the prompt (SillyTavern's is_system): never in the output,
     * and not counted for IN_CHAT depth. Always false in the output. Ignored
     * when `message_id` links the entry to a stored message: that message's
     * hidden state applies instead.
     *
     * @generated from field: bool hidden = 4;
     */
    hidden: boolean;
    /**
     * Optional, in a request with `chat_id`: the id of the chat's stored
     * message this history entry stands for. The entry is then hidden exactly
     * when that message is, hidden by hand or by auto-hide as the chat's
     * current settings compute it (as GetInclusion reports `hidden`); its
     * role, name and content stay the entry's own. An id the chat does not
     * hold is NOT_FOUND naming the entry (e.g. `history[2].message_id`); an id
     * without `chat_id` is INVALID_ARGUMENT. Empty: not linked. In the output:
     * the id the history message came with (from the request, or the stored
     * message's id when the history is the stored transcript); empty for
     * injected messages.
     *
     * @generated from field: string message_id = 5;
     */
    messageId: string;
};
/**
 * Describes the message recap.v1.PromptMessage.
 * Use `create(PromptMessageSchema)` to create a new message.
 */
export declare const PromptMessageSchema: GenMessage<PromptMessage>;
/**
 * One extension prompt, as SillyTavern's setExtensionPrompt registers it.
 *
 * @generated from message recap.v1.ExtensionPrompt
 */
export type ExtensionPrompt = Message$1<"recap.v1.ExtensionPrompt"> & {
    /**
     * Registration key: prompts are joined in key order, and a later prompt
     * with the same key replaces an earlier one (extra prompts come after the
     * chat's own injections). Non-empty.
     *
     * @generated from field: string key = 1;
     */
    key: string;
    /**
     * The text; empty is never inserted. Trimmed when placed. A blank value
     * alone places nothing; in IN_CHAT after a non-blank value of the same
     * depth and role it leaves an empty line (the joined text of an IN_CHAT
     * message is trimmed at its start only).
     *
     * @generated from field: string value = 2;
     */
    value: string;
    /**
     * Where it goes; NONE is never placed. UNSPECIFIED is INVALID_ARGUMENT.
     *
     * @generated from field: recap.v1.InjectionPosition position = 3;
     */
    position: InjectionPosition;
    /**
     * For IN_CHAT: visible messages from the end. 0..=1000 in a request,
     * whatever the position (else INVALID_ARGUMENT). World Info's at-depth
     * prompts, placed beside these, may be deeper; an IN_CHAT prompt deeper
     * than 10000 (SillyTavern's deepest) is never placed.
     *
     * @generated from field: int32 depth = 4;
     */
    depth: number;
    /**
     * Its role; ignored in text completion outside IN_CHAT. UNSPECIFIED is
     * INVALID_ARGUMENT.
     *
     * @generated from field: recap.v1.InjectionRole role = 5;
     */
    role: InjectionRole;
    /**
     * World Info scanning; never changes placement.
     *
     * @generated from field: bool scan = 6;
     */
    scan: boolean;
};
/**
 * Describes the message recap.v1.ExtensionPrompt.
 * Use `create(ExtensionPromptSchema)` to create a new message.
 */
export declare const ExtensionPromptSchema: GenMessage<ExtensionPrompt>;
/**
 * @generated from message recap.v1.RenderPromptRequest
 */
export type RenderPromptRequest = Message$1<"recap.v1.RenderPromptRequest"> & {
    /**
     * Optional. When set, that chat's current recapd injections (keys
     * auto_recap_scene, auto_recap_messages and auto_recap_recall) take part as extension
     * prompts, and the chat's hidden messages (by hand or by auto-hide) never
     * appear: with an empty `history` the chat's stored transcript is the
     * history; entries of a given `history` linked by `message_id` follow the
     * stored message's hidden state. The injections, transcript and hidden
     * state are read at one moment of the chat. An unknown chat is NOT_FOUND.
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * Text or chat completion; UNSPECIFIED is INVALID_ARGUMENT.
     *
     * @generated from field: recap.v1.PromptMode mode = 2;
     */
    mode: PromptMode;
    /**
     * The story string (character card / system prompt block).
     *
     * @generated from field: string story_string = 3;
     */
    storyString: string;
    /**
     * The chat history, oldest first, hidden messages included (flagged
     * `hidden`, or linked by `message_id` to a hidden stored message).
     * Empty with `chat_id`: the chat's stored messages, oldest first, each as
     * a message of role USER (user messages), SYSTEM (narrator messages) or
     * ASSISTANT (every other), with its name, the current swipe's text and
     * its id as `message_id`; hidden ones left out. Empty without `chat_id`:
     * no history.
     *
     * @generated from field: repeated recap.v1.PromptMessage history = 4;
     */
    history: PromptMessage[];
    /**
     * Whether the request continues the last message (IN_CHAT depth 0 then
     * goes before the last message, still a block of its own).
     *
     * @generated from field: bool continue_last = 5;
     */
    continueLast: boolean;
    /**
     * The backend's own extension prompts (lore entries of its own...).
     * With `chat_id`, those flagged `scan` are scanned by World Info.
     *
     * @generated from field: repeated recap.v1.ExtensionPrompt extra = 6;
     */
    extra: ExtensionPrompt[];
    /**
     * World Info, with `chat_id`: the chat's books are scanned as
     * LorebookService.ScanWorldInfo scans them (the same history, `extra`,
     * `texts`, `generation_type`, `dry_run` and `seed`), every activated
     * entry is placed where SillyTavern places it (see docs/world-info.md),
     * and the activation is answered in `world_info`. Unless `dry_run`, the
     * chat's sticky and cooldown effects are started, advanced and ended,
     * durably, before the answer. Without `chat_id` there is no World Info
     * and these three fields have no effect (`generation_type` is still
     * checked).
     * SillyTavern's generation type (normal, continue, impersonate, swipe,
     * regenerate, quiet; empty: normal; anything else INVALID_ARGUMENT).
     *
     * @generated from field: string generation_type = 7;
     */
    generationType: string;
    /**
     * A preview: the activation a real generation would get now (sticky
     * entries kept in, entries on cooldown or delay left out, the same seed
     * giving the same draws), but no timed effect is started, advanced or
     * ended: nothing is written. (SillyTavern's own dry run ignores sticky
     * and cooldown instead; see docs/world-info.md.)
     *
     * @generated from field: bool dry_run = 8;
     */
    dryRun: boolean;
    /**
     * Seeds World Info's random parts (probability rolls, inclusion-group
     * draws); 0: a fresh seed.
     *
     * @generated from field: uint64 seed = 9;
     */
    seed: bigint;
    /**
     * The author's note, on a turn that inserts it (SillyTavern's
     * `2_floating_prompt`): placed as an extension prompt under that key with
     * its own position, depth and role (its `key` is ignored), World Info's
     * author's-note entries (positions 2 and 3) around its text, joined with
     * "\n", one leading and one trailing line break removed. With its `scan`
     * on, its text is scanned by World Info (SillyTavern's "allow WI scan").
     * Unset: no author's note,
     * and those entries are placed nowhere, as in SillyTavern.
     *
     * @generated from field: recap.v1.ExtensionPrompt authors_note = 10;
     */
    authorsNote?: ExtensionPrompt | undefined;
    /**
     * The character's example messages (SillyTavern's mes_example, macros
     * substituted), each split into blocks at its `<START>` lines; World
     * Info's example entries are added above and below them. Text
     * completion: each block as `***`, a line break, the block and a line
     * break, after the rest of `text`; chat completion: per block an
     * "[Example Chat]" system message then its lines as system messages
     * named example_user and example_assistant (lines starting with
     * `texts.user_name:` or `texts.character_name:` start a new one).
     *
     * @generated from field: repeated string examples = 11;
     */
    examples: string[];
    /**
     * The character's and persona's texts and names World Info reads, and
     * the names that split chat completion's example lines (see
     * WorldInfoTexts; with `chat_id`, empty names are the chat's speakers).
     *
     * @generated from field: recap.v1.WorldInfoTexts texts = 12;
     */
    texts?: WorldInfoTexts | undefined;
};
/**
 * Describes the message recap.v1.RenderPromptRequest.
 * Use `create(RenderPromptRequestSchema)` to create a new message.
 */
export declare const RenderPromptRequestSchema: GenMessage<RenderPromptRequest>;
/**
 * @generated from message recap.v1.RenderPromptResponse
 */
export type RenderPromptResponse = Message$1<"recap.v1.RenderPromptResponse"> & {
    /**
     * Text completion: BEFORE_PROMPT text + "\n"; then the story string, its
     * `{{wiBefore}}`/`{{loreBefore}}` and `{{wiAfter}}`/`{{loreAfter}}`
     * replaced by World Info's before and after texts, and a text no macro
     * took joined with "\n" before (respectively after) it; then "\n" +
     * IN_PROMPT text + "\n"; then the example blocks (World Info's
     * examples-top, `examples`, examples-bottom), each "***\n" + block +
     * "\n", after a "\n" when the text does not end with one. Each part only
     * when non-empty; `{{outlet::name}}` substituted. Empty in chat
     * completion.
     *
     * @generated from field: string text = 1;
     */
    text: string;
    /**
     * The messages: in text completion the visible history (the request's,
     * or the chat's stored transcript; see RenderPromptRequest.history) with
     * the IN_CHAT prompts placed; in chat completion the BEFORE_PROMPT
     * messages (one per role: system, user, assistant), the main prompt (a
     * system message holding story_string, World Info macros replaced), the
     * IN_PROMPT messages, a system message with World Info's before text and
     * one with its after text (each when no macro took it and non-empty),
     * the example messages (per block an "[Example Chat]" system message,
     * then system messages named example_user / example_assistant), then
     * that history.
     * IN_CHAT, both modes: each depth gives one block (one message per role:
     * assistant, user, system), placed from depth 0 upwards at d + (messages
     * already injected) from the end, or first when that is past the start.
     * Blocks of different depths landing at the same place stay separate, the
     * deeper one first. World Info's at-depth entries are IN_CHAT prompts
     * keyed customDepthWI_<depth>_<role>, merged by key with the others of
     * their depth and role.
     *
     * @generated from field: repeated recap.v1.PromptMessage messages = 2;
     */
    messages: PromptMessage[];
    /**
     * With `chat_id`: the World Info activation this prompt placed: its
     * `activated` entries as ScanWorldInfo answers them but with `content`
     * empty, and every placement text (`before`, `after`, `depth`, `an_top`,
     * `an_bottom`, `examples_top`, `examples_bottom`, `outlets`) empty: the
     * prompt above carries World Info's text, so the answer holds each
     * entry's content once. ScanWorldInfo (with `dry_run`) answers the
     * texts. Unset without `chat_id`.
     *
     * @generated from field: recap.v1.ScanWorldInfoResponse world_info = 3;
     */
    worldInfo?: ScanWorldInfoResponse | undefined;
};
/**
 * Describes the message recap.v1.RenderPromptResponse.
 * Use `create(RenderPromptResponseSchema)` to create a new message.
 */
export declare const RenderPromptResponseSchema: GenMessage<RenderPromptResponse>;
/**
 * One unit of recap work.
 *
 * @generated from message recap.v1.Job
 */
export type Job = Message$1<"recap.v1.Job"> & {
    /**
     * Server-chosen, unique.
     *
     * @generated from field: string job_id = 1;
     */
    jobId: string;
    /**
     * @generated from field: string chat_id = 2;
     */
    chatId: string;
    /**
     * @generated from field: recap.v1.JobKind kind = 3;
     */
    kind: JobKind;
    /**
     * @generated from field: recap.v1.JobState state = 4;
     */
    state: JobState;
    /**
     * The break message of a scene recap or merge, the recapped message, and
     * for a detection the newest message it examined (empty before it ran).
     *
     * @generated from field: string message_id = 5;
     */
    messageId: string;
    /**
     * Requests made to the LLM for it (reset to 0 by RetryJob).
     *
     * @generated from field: uint32 attempts = 6;
     */
    attempts: number;
    /**
     * Why the latest attempt failed; empty when none did.
     *
     * @generated from field: string last_error = 7;
     */
    lastError: string;
    /**
     * @generated from field: google.protobuf.Timestamp created_at = 8;
     */
    createdAt?: Timestamp | undefined;
    /**
     * @generated from field: google.protobuf.Timestamp updated_at = 9;
     */
    updatedAt?: Timestamp | undefined;
    /**
     * A short text: the break found, the recap written, or why nothing was
     * applied.
     *
     * @generated from field: string result = 10;
     */
    result: string;
    /**
     * Lore jobs: what the job is about beyond its scene: `<type>-<name>` of
     * the entity for a resolution or merge, its name normalised (lowercase,
     * punctuation and a leading "the", "a" or "an" left out, so
     * `character-captain mira`), the entry's uid for a compaction. Empty for
     * the other kinds.
     *
     * @generated from field: string subject = 11;
     */
    subject: string;
};
/**
 * Describes the message recap.v1.Job.
 * Use `create(JobSchema)` to create a new message.
 */
export declare const JobSchema: GenMessage<Job>;
/**
 * @generated from message recap.v1.GenerateSceneRecapRequest
 */
export type GenerateSceneRecapRequest = Message$1<"recap.v1.GenerateSceneRecapRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * A message of the chat (NOT_FOUND otherwise); made a visible scene break
     * if it is not one.
     *
     * @generated from field: string message_id = 2;
     */
    messageId: string;
};
/**
 * Describes the message recap.v1.GenerateSceneRecapRequest.
 * Use `create(GenerateSceneRecapRequestSchema)` to create a new message.
 */
export declare const GenerateSceneRecapRequestSchema: GenMessage<GenerateSceneRecapRequest>;
/**
 * @generated from message recap.v1.DetectSceneBreaksRequest
 */
export type DetectSceneBreaksRequest = Message$1<"recap.v1.DetectSceneBreaksRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
};
/**
 * Describes the message recap.v1.DetectSceneBreaksRequest.
 * Use `create(DetectSceneBreaksRequestSchema)` to create a new message.
 */
export declare const DetectSceneBreaksRequestSchema: GenMessage<DetectSceneBreaksRequest>;
/**
 * @generated from message recap.v1.GenerateRunningRecapRequest
 */
export type GenerateRunningRecapRequest = Message$1<"recap.v1.GenerateRunningRecapRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * A scene-break message with a non-empty scene recap
     * (FAILED_PRECONDITION otherwise; NOT_FOUND for an unknown message).
     *
     * @generated from field: string message_id = 2;
     */
    messageId: string;
};
/**
 * Describes the message recap.v1.GenerateRunningRecapRequest.
 * Use `create(GenerateRunningRecapRequestSchema)` to create a new message.
 */
export declare const GenerateRunningRecapRequestSchema: GenMessage<GenerateRunningRecapRequest>;
/**
 * @generated from message recap.v1.RegenerateRunningRecapRequest
 */
export type RegenerateRunningRecapRequest = Message$1<"recap.v1.RegenerateRunningRecapRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
};
/**
 * Describes the message recap.v1.RegenerateRunningRecapRequest.
 * Use `create(RegenerateRunningRecapRequestSchema)` to create a new message.
 */
export declare const RegenerateRunningRecapRequestSchema: GenMessage<RegenerateRunningRecapRequest>;
/**
 * @generated from message recap.v1.GenerateLoreRequest
 */
export type GenerateLoreRequest = Message$1<"recap.v1.GenerateLoreRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * A visible scene-break message of the chat (NOT_FOUND for an unknown
     * message, FAILED_PRECONDITION when it is not a visible break).
     *
     * @generated from field: string message_id = 2;
     */
    messageId: string;
};
/**
 * Describes the message recap.v1.GenerateLoreRequest.
 * Use `create(GenerateLoreRequestSchema)` to create a new message.
 */
export declare const GenerateLoreRequestSchema: GenMessage<GenerateLoreRequest>;
/**
 * @generated from message recap.v1.GenerateMessageRecapsRequest
 */
export type GenerateMessageRecapsRequest = Message$1<"recap.v1.GenerateMessageRecapsRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * Messages of the chat (NOT_FOUND names the first unknown one); at most
     * 1000, duplicates ignored.
     *
     * @generated from field: repeated string message_ids = 2;
     */
    messageIds: string[];
};
/**
 * Describes the message recap.v1.GenerateMessageRecapsRequest.
 * Use `create(GenerateMessageRecapsRequestSchema)` to create a new message.
 */
export declare const GenerateMessageRecapsRequestSchema: GenMessage<GenerateMessageRecapsRequest>;
/**
 * @generated from message recap.v1.ListJobsRequest
 */
export type ListJobsRequest = Message$1<"recap.v1.ListJobsRequest"> & {
    /**
     * Empty: every chat of the caller's tenant.
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * Only jobs in these states; empty: all.
     *
     * @generated from field: repeated recap.v1.JobState states = 2;
     */
    states: JobState[];
    /**
     * 1..=1000; 0 means 100.
     *
     * @generated from field: uint32 page_size = 3;
     */
    pageSize: number;
    /**
     * From a previous answer's `next_page_token`; empty for the first page.
     *
     * @generated from field: string page_token = 4;
     */
    pageToken: string;
};
/**
 * Describes the message recap.v1.ListJobsRequest.
 * Use `create(ListJobsRequestSchema)` to create a new message.
 */
export declare const ListJobsRequestSchema: GenMessage<ListJobsRequest>;
/**
 * @generated from message recap.v1.ListJobsResponse
 */
export type ListJobsResponse = Message$1<"recap.v1.ListJobsResponse"> & {
    /**
     * Newest first.
     *
     * @generated from field: repeated recap.v1.Job jobs = 1;
     */
    jobs: Job[];
    /**
     * Empty on the last page.
     *
     * @generated from field: string next_page_token = 2;
     */
    nextPageToken: string;
};
/**
 * Describes the message recap.v1.ListJobsResponse.
 * Use `create(ListJobsResponseSchema)` to create a new message.
 */
export declare const ListJobsResponseSchema: GenMessage<ListJobsResponse>;
/**
 * @generated from message recap.v1.CancelJobRequest
 */
export type CancelJobRequest = Message$1<"recap.v1.CancelJobRequest"> & {
    /**
     * @generated from field: string job_id = 1;
     */
    jobId: string;
};
/**
 * Describes the message recap.v1.CancelJobRequest.
 * Use `create(CancelJobRequestSchema)` to create a new message.
 */
export declare const CancelJobRequestSchema: GenMessage<CancelJobRequest>;
/**
 * @generated from message recap.v1.RetryJobRequest
 */
export type RetryJobRequest = Message$1<"recap.v1.RetryJobRequest"> & {
    /**
     * @generated from field: string job_id = 1;
     */
    jobId: string;
};
/**
 * Describes the message recap.v1.RetryJobRequest.
 * Use `create(RetryJobRequestSchema)` to create a new message.
 */
export declare const RetryJobRequestSchema: GenMessage<RetryJobRequest>;
/**
 * @generated from message recap.v1.WatchJobsRequest
 */
export type WatchJobsRequest = Message$1<"recap.v1.WatchJobsRequest"> & {
    /**
     * Empty: every chat of the caller's tenant. Ids follow the id rules
     * (INVALID_ARGUMENT on `chat_ids[i]`); unknown chats are accepted.
     *
     * @generated from field: repeated string chat_ids = 1;
     */
    chatIds: string[];
};
/**
 * Describes the message recap.v1.WatchJobsRequest.
 * Use `create(WatchJobsRequestSchema)` to create a new message.
 */
export declare const WatchJobsRequestSchema: GenMessage<WatchJobsRequest>;
/**
 * A lorebook as recapd keeps it.
 *
 * @generated from message recap.v1.Lorebook
 */
export type Lorebook = Message$1<"recap.v1.Lorebook"> & {
    /**
     * Its name, unique per tenant: 1..=256 bytes of UTF-8, no control
     * characters.
     *
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * Entries in its `entries` object.
     *
     * @generated from field: uint32 entry_count = 2;
     */
    entryCount: number;
    /**
     * When it was last imported or edited.
     *
     * @generated from field: google.protobuf.Timestamp updated_at = 3;
     */
    updatedAt?: Timestamp | undefined;
};
/**
 * Describes the message recap.v1.Lorebook.
 * Use `create(LorebookSchema)` to create a new message.
 */
export declare const LorebookSchema: GenMessage<Lorebook>;
/**
 * ImportLorebook's request.
 *
 * @generated from message recap.v1.ImportLorebookRequest
 */
export type ImportLorebookRequest = Message$1<"recap.v1.ImportLorebookRequest"> & {
    /**
     * The book's name (see Lorebook.name). A book of that name is replaced.
     *
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * The text of a SillyTavern World Info file (a JSON object with an
     * `entries` object).
     *
     * @generated from field: string json = 2;
     */
    json: string;
};
/**
 * Describes the message recap.v1.ImportLorebookRequest.
 * Use `create(ImportLorebookRequestSchema)` to create a new message.
 */
export declare const ImportLorebookRequestSchema: GenMessage<ImportLorebookRequest>;
/**
 * ImportCharacterBook's request.
 *
 * @generated from message recap.v1.ImportCharacterBookRequest
 */
export type ImportCharacterBookRequest = Message$1<"recap.v1.ImportCharacterBookRequest"> & {
    /**
     * The name to store the book under; empty: the card's
     * `character_book.name`, else "<character name>'s Lorebook" (the names
     * SillyTavern gives it).
     *
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * A character card: a PNG with a `chara` (V2) or `ccv3` (V3) text chunk
     * (base64 JSON), or the card's JSON itself.
     *
     * @generated from field: bytes card = 2;
     */
    card: Uint8Array;
};
/**
 * Describes the message recap.v1.ImportCharacterBookRequest.
 * Use `create(ImportCharacterBookRequestSchema)` to create a new message.
 */
export declare const ImportCharacterBookRequestSchema: GenMessage<ImportCharacterBookRequest>;
/**
 * ExportLorebook's request.
 *
 * @generated from message recap.v1.ExportLorebookRequest
 */
export type ExportLorebookRequest = Message$1<"recap.v1.ExportLorebookRequest"> & {
    /**
     * @generated from field: string name = 1;
     */
    name: string;
};
/**
 * Describes the message recap.v1.ExportLorebookRequest.
 * Use `create(ExportLorebookRequestSchema)` to create a new message.
 */
export declare const ExportLorebookRequestSchema: GenMessage<ExportLorebookRequest>;
/**
 * ExportLorebook's answer.
 *
 * @generated from message recap.v1.ExportLorebookResponse
 */
export type ExportLorebookResponse = Message$1<"recap.v1.ExportLorebookResponse"> & {
    /**
     * The World Info file: an imported book exported unchanged is JSON-equal
     * to the file it was imported from (every member kept, numbers as
     * written); edited entries are written with SillyTavern's field names.
     *
     * @generated from field: string json = 1;
     */
    json: string;
};
/**
 * Describes the message recap.v1.ExportLorebookResponse.
 * Use `create(ExportLorebookResponseSchema)` to create a new message.
 */
export declare const ExportLorebookResponseSchema: GenMessage<ExportLorebookResponse>;
/**
 * ListLorebooks' request.
 *
 * @generated from message recap.v1.ListLorebooksRequest
 */
export type ListLorebooksRequest = Message$1<"recap.v1.ListLorebooksRequest"> & {
    /**
     * 1..=1000; 0 means 100.
     *
     * @generated from field: uint32 page_size = 1;
     */
    pageSize: number;
    /**
     * From a previous answer's `next_page_token`; empty for the first page.
     *
     * @generated from field: string page_token = 2;
     */
    pageToken: string;
};
/**
 * Describes the message recap.v1.ListLorebooksRequest.
 * Use `create(ListLorebooksRequestSchema)` to create a new message.
 */
export declare const ListLorebooksRequestSchema: GenMessage<ListLorebooksRequest>;
/**
 * ListLorebooks' answer.
 *
 * @generated from message recap.v1.ListLorebooksResponse
 */
export type ListLorebooksResponse = Message$1<"recap.v1.ListLorebooksResponse"> & {
    /**
     * Ordered by name (as bytes).
     *
     * @generated from field: repeated recap.v1.Lorebook lorebooks = 1;
     */
    lorebooks: Lorebook[];
    /**
     * Empty on the last page.
     *
     * @generated from field: string next_page_token = 2;
     */
    nextPageToken: string;
};
/**
 * Describes the message recap.v1.ListLorebooksResponse.
 * Use `create(ListLorebooksResponseSchema)` to create a new message.
 */
export declare const ListLorebooksResponseSchema: GenMessage<ListLorebooksResponse>;
/**
 * DeleteLorebook's request.
 *
 * @generated from message recap.v1.DeleteLorebookRequest
 */
export type DeleteLorebookRequest = Message$1<"recap.v1.DeleteLorebookRequest"> & {
    /**
     * @generated from field: string name = 1;
     */
    name: string;
};
/**
 * Describes the message recap.v1.DeleteLorebookRequest.
 * Use `create(DeleteLorebookRequestSchema)` to create a new message.
 */
export declare const DeleteLorebookRequestSchema: GenMessage<DeleteLorebookRequest>;
/**
 * DeleteLorebook's answer.
 *
 * @generated from message recap.v1.DeleteLorebookResponse
 */
export type DeleteLorebookResponse = Message$1<"recap.v1.DeleteLorebookResponse"> & {};
/**
 * Describes the message recap.v1.DeleteLorebookResponse.
 * Use `create(DeleteLorebookResponseSchema)` to create a new message.
 */
export declare const DeleteLorebookResponseSchema: GenMessage<DeleteLorebookResponse>;
/**
 * GetLorebookEntry's request.
 *
 * @generated from message recap.v1.GetLorebookEntryRequest
 */
export type GetLorebookEntryRequest = Message$1<"recap.v1.GetLorebookEntryRequest"> & {
    /**
     * The book.
     *
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * The entry's uid (the key of the book's `entries` object).
     *
     * @generated from field: string uid = 2;
     */
    uid: string;
};
/**
 * Describes the message recap.v1.GetLorebookEntryRequest.
 * Use `create(GetLorebookEntryRequestSchema)` to create a new message.
 */
export declare const GetLorebookEntryRequestSchema: GenMessage<GetLorebookEntryRequest>;
/**
 * PutLorebookEntry's request.
 *
 * @generated from message recap.v1.PutLorebookEntryRequest
 */
export type PutLorebookEntryRequest = Message$1<"recap.v1.PutLorebookEntryRequest"> & {
    /**
     * The book.
     *
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * The entry's uid; empty: a new entry under the lowest free integer uid
     * (as SillyTavern picks one).
     *
     * @generated from field: string uid = 2;
     */
    uid: string;
    /**
     * A JSON object of entry fields in SillyTavern's names (`key`,
     * `keysecondary`, `comment`, `content`, `constant`, `selective`,
     * `order`, `position`, `depth`, `role`, ...). A new entry gets
     * SillyTavern's defaults for the fields it leaves out; an existing entry
     * keeps the members `fields` does not name, as written. A member set to
     * JSON null is removed. `uid` inside `fields` is ignored.
     *
     * @generated from field: string fields = 3;
     */
    fields: string;
};
/**
 * Describes the message recap.v1.PutLorebookEntryRequest.
 * Use `create(PutLorebookEntryRequestSchema)` to create a new message.
 */
export declare const PutLorebookEntryRequestSchema: GenMessage<PutLorebookEntryRequest>;
/**
 * DeleteLorebookEntry's request.
 *
 * @generated from message recap.v1.DeleteLorebookEntryRequest
 */
export type DeleteLorebookEntryRequest = Message$1<"recap.v1.DeleteLorebookEntryRequest"> & {
    /**
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * @generated from field: string uid = 2;
     */
    uid: string;
};
/**
 * Describes the message recap.v1.DeleteLorebookEntryRequest.
 * Use `create(DeleteLorebookEntryRequestSchema)` to create a new message.
 */
export declare const DeleteLorebookEntryRequestSchema: GenMessage<DeleteLorebookEntryRequest>;
/**
 * One entry of a lorebook.
 *
 * @generated from message recap.v1.LorebookEntry
 */
export type LorebookEntry = Message$1<"recap.v1.LorebookEntry"> & {
    /**
     * The book.
     *
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * The entry's uid.
     *
     * @generated from field: string uid = 2;
     */
    uid: string;
    /**
     * The entry's JSON object, as the book holds it.
     *
     * @generated from field: string json = 3;
     */
    json: string;
    /**
     * The book after the change (entry count, updated_at).
     *
     * @generated from field: recap.v1.Lorebook lorebook = 4;
     */
    lorebook?: Lorebook | undefined;
};
/**
 * Describes the message recap.v1.LorebookEntry.
 * Use `create(LorebookEntrySchema)` to create a new message.
 */
export declare const LorebookEntrySchema: GenMessage<LorebookEntry>;
/**
 * ScanWorldInfo's request.
 *
 * @generated from message recap.v1.ScanWorldInfoRequest
 */
export type ScanWorldInfoRequest = Message$1<"recap.v1.ScanWorldInfoRequest"> & {
    /**
     * The chat; its settings say which books apply and how to scan.
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * SillyTavern's generation type: normal, continue, impersonate, swipe,
     * regenerate or quiet; empty means normal. An entry's `triggers` name
     * these. For swipe the history's last visible message is the one being
     * replaced: it is not scanned (nor placed by RenderPrompt), as in
     * SillyTavern. Anything else is INVALID_ARGUMENT.
     *
     * @generated from field: string generation_type = 2;
     */
    generationType: string;
    /**
     * A preview: the activation a real generation would get now (sticky
     * entries kept in, entries on cooldown or delay left out, the same seed
     * giving the same draws), but no timed effect is started, advanced or
     * ended: nothing is written. (SillyTavern's own dry run ignores sticky
     * and cooldown instead; see docs/world-info.md.)
     *
     * @generated from field: bool dry_run = 3;
     */
    dryRun: boolean;
    /**
     * Seeds the random parts (probability rolls, inclusion-group draws): the
     * same seed, chat and books give the same activation. 0: a fresh seed.
     *
     * @generated from field: uint64 seed = 4;
     */
    seed: bigint;
    /**
     * As RenderPromptRequest.history: empty means the chat's stored
     * transcript; hidden entries are not scanned (nor counted as the chat's
     * length by timed effects).
     *
     * @generated from field: repeated recap.v1.PromptMessage history = 5;
     */
    history: PromptMessage[];
    /**
     * As RenderPromptRequest.extra: those flagged `scan` are scanned, with
     * the chat's own injections whose `scan` is on (an extra prompt under
     * one of their keys replaces it), in key order.
     *
     * @generated from field: repeated recap.v1.ExtensionPrompt extra = 6;
     */
    extra: ExtensionPrompt[];
    /**
     * The texts of the character and persona an entry may ask to be scanned
     * (its `match*` flags), and the names its macros and character filter
     * read. Unset: all empty.
     *
     * @generated from field: recap.v1.WorldInfoTexts texts = 7;
     */
    texts?: WorldInfoTexts | undefined;
};
/**
 * Describes the message recap.v1.ScanWorldInfoRequest.
 * Use `create(ScanWorldInfoRequestSchema)` to create a new message.
 */
export declare const ScanWorldInfoRequestSchema: GenMessage<ScanWorldInfoRequest>;
/**
 * What SillyTavern knows of the character and persona at a generation,
 * as World Info reads it. Every field is optional (empty: absent).
 *
 * @generated from message recap.v1.WorldInfoTexts
 */
export type WorldInfoTexts = Message$1<"recap.v1.WorldInfoTexts"> & {
    /**
     * Scanned for entries with `matchPersonaDescription`.
     *
     * @generated from field: string persona_description = 1;
     */
    personaDescription: string;
    /**
     * Scanned for entries with `matchCharacterDescription`.
     *
     * @generated from field: string character_description = 2;
     */
    characterDescription: string;
    /**
     * Scanned for entries with `matchCharacterPersonality`.
     *
     * @generated from field: string character_personality = 3;
     */
    characterPersonality: string;
    /**
     * Scanned for entries with `matchCharacterDepthPrompt`.
     *
     * @generated from field: string character_depth_prompt = 4;
     */
    characterDepthPrompt: string;
    /**
     * Scanned for entries with `matchScenario`.
     *
     * @generated from field: string scenario = 5;
     */
    scenario: string;
    /**
     * Scanned for entries with `matchCreatorNotes`.
     *
     * @generated from field: string creator_notes = 6;
     */
    creatorNotes: string;
    /**
     * The character's name (`{{char}}`) and, for entries' character filters,
     * the character's file name as SillyTavern names it (the avatar file
     * name without extension when different: set `character_filter_name`).
     * Empty: the speaker of the chat's latest character message.
     *
     * @generated from field: string character_name = 7;
     */
    characterName: string;
    /**
     * The name a `characterFilter.names` entry is compared with; empty:
     * `character_name`.
     *
     * @generated from field: string character_filter_name = 8;
     */
    characterFilterName: string;
    /**
     * The character's tags (for `characterFilter.tags`).
     *
     * @generated from field: repeated string character_tags = 9;
     */
    characterTags: string[];
    /**
     * The user's (persona's) name (`{{user}}`). Empty: the speaker of the
     * chat's latest user message.
     *
     * @generated from field: string user_name = 10;
     */
    userName: string;
};
/**
 * Describes the message recap.v1.WorldInfoTexts.
 * Use `create(WorldInfoTextsSchema)` to create a new message.
 */
export declare const WorldInfoTextsSchema: GenMessage<WorldInfoTexts>;
/**
 * One entry an activation put in.
 *
 * @generated from message recap.v1.ActivatedEntry
 */
export type ActivatedEntry = Message$1<"recap.v1.ActivatedEntry"> & {
    /**
     * The book it comes from.
     *
     * @generated from field: string book = 1;
     */
    book: string;
    /**
     * Its uid in that book.
     *
     * @generated from field: string uid = 2;
     */
    uid: string;
    /**
     * SillyTavern's position number: 0 before the character definitions, 1
     * after them, 2 above the author's note, 3 below it, 4 at depth, 5 above
     * the example messages, 6 below them, 7 an outlet; -1 when the entry has
     * no (known) position, so it is placed nowhere.
     *
     * @generated from field: int32 position = 3;
     */
    position: number;
    /**
     * For position 4: its depth; -1 when the entry has none (SillyTavern
     * then places it only with an earlier depth-4 entry of its role, else
     * nowhere).
     *
     * @generated from field: int32 depth = 4;
     */
    depth: number;
    /**
     * For position 4: its role.
     *
     * @generated from field: recap.v1.InjectionRole role = 5;
     */
    role: InjectionRole;
    /**
     * Its `order`.
     *
     * @generated from field: double order = 6;
     */
    order: number;
    /**
     * Its content, macros substituted.
     *
     * @generated from field: string content = 7;
     */
    content: string;
    /**
     * For position 7: the outlet's name.
     *
     * @generated from field: string outlet_name = 8;
     */
    outletName: string;
};
/**
 * Describes the message recap.v1.ActivatedEntry.
 * Use `create(ActivatedEntrySchema)` to create a new message.
 */
export declare const ActivatedEntrySchema: GenMessage<ActivatedEntry>;
/**
 * At-depth World Info of one depth and role, its entries joined.
 *
 * @generated from message recap.v1.DepthPrompt
 */
export type DepthPrompt = Message$1<"recap.v1.DepthPrompt"> & {
    /**
     * Messages from the end of the chat (may exceed 1000; past 10000 never
     * placed).
     *
     * @generated from field: uint32 depth = 1;
     */
    depth: number;
    /**
     * The injected message's role.
     *
     * @generated from field: recap.v1.InjectionRole role = 2;
     */
    role: InjectionRole;
    /**
     * The entries' contents joined with "\n", ascending by `order`.
     *
     * @generated from field: string text = 3;
     */
    text: string;
};
/**
 * Describes the message recap.v1.DepthPrompt.
 * Use `create(DepthPromptSchema)` to create a new message.
 */
export declare const DepthPromptSchema: GenMessage<DepthPrompt>;
/**
 * ScanWorldInfo's answer.
 *
 * @generated from message recap.v1.ScanWorldInfoResponse
 */
export type ScanWorldInfoResponse = Message$1<"recap.v1.ScanWorldInfoResponse"> & {
    /**
     * The activated entries, in SillyTavern's order of activation (entries
     * of earlier passes first). The lists below are in SillyTavern's
     * placement order: by `order`, higher later, unless said otherwise. An
     * entry with empty content is placed nowhere.
     *
     * @generated from field: repeated recap.v1.ActivatedEntry activated = 1;
     */
    activated: ActivatedEntry[];
    /**
     * Position 0 entries joined with "\n" (`{{wiBefore}}`).
     *
     * @generated from field: string before = 2;
     */
    before: string;
    /**
     * Position 1 entries joined with "\n" (`{{wiAfter}}`).
     *
     * @generated from field: string after = 3;
     */
    after: string;
    /**
     * Position 4, one per depth and role, ordered by depth then role
     * (system, user, assistant).
     *
     * @generated from field: repeated recap.v1.DepthPrompt depth = 4;
     */
    depth: DepthPrompt[];
    /**
     * Position 2 (above the author's note), joined with "\n".
     *
     * @generated from field: string an_top = 5;
     */
    anTop: string;
    /**
     * Position 3 (below the author's note), joined with "\n".
     *
     * @generated from field: string an_bottom = 6;
     */
    anBottom: string;
    /**
     * Position 5 (above the example messages): one text per entry, each read
     * as example messages; higher `order` first.
     *
     * @generated from field: repeated string examples_top = 7;
     */
    examplesTop: string[];
    /**
     * Position 6 (below the example messages), as `examples_top`; higher
     * `order` later.
     *
     * @generated from field: repeated string examples_bottom = 8;
     */
    examplesBottom: string[];
    /**
     * Position 7, by outlet name (`{{outlet::name}}`), joined with "\n",
     * higher `order` first.
     *
     * @generated from field: map<string, string> outlets = 9;
     */
    outlets: {
        [key: string]: string;
    };
};
/**
 * Describes the message recap.v1.ScanWorldInfoResponse.
 * Use `create(ScanWorldInfoResponseSchema)` to create a new message.
 */
export declare const ScanWorldInfoResponseSchema: GenMessage<ScanWorldInfoResponse>;
/**
 * @generated from message recap.v1.RecallRequest
 */
export type RecallRequest = Message$1<"recap.v1.RecallRequest"> & {
    /**
     * A known chat (NOT_FOUND otherwise); id rules apply (INVALID_ARGUMENT).
     *
     * @generated from field: string chat_id = 1;
     */
    chatId: string;
    /**
     * What to look for. Empty: the chat's current moment, as the recall tier
     * sees it (its last `recall_query_messages` messages, with the passages
     * of the last `recall_exclude_recent` left out). Otherwise this text,
     * embedded by the embeddings endpoint when one is configured, over the
     * whole history.
     *
     * @generated from field: string query = 2;
     */
    query: string;
    /**
     * The most hits. 0: 10; at most 100.
     *
     * @generated from field: uint32 limit = 3;
     */
    limit: number;
    /**
     * Hits whose fused score is lower are left out. Unset: the chat's
     * `recall_min_score`.
     *
     * @generated from field: optional double min_score = 4;
     */
    minScore?: number | undefined;
};
/**
 * Describes the message recap.v1.RecallRequest.
 * Use `create(RecallRequestSchema)` to create a new message.
 */
export declare const RecallRequestSchema: GenMessage<RecallRequest>;
/**
 * @generated from message recap.v1.RecallResponse
 */
export type RecallResponse = Message$1<"recap.v1.RecallResponse"> & {
    /**
     * The passages found, best first (ties: the newer message first).
     *
     * @generated from field: repeated recap.v1.RecallHit hits = 1;
     */
    hits: RecallHit[];
    /**
     * Whether vector similarity took part (an embeddings endpoint is
     * configured, the query has a vector and the chat's passages have
     * vectors); false: keyword search alone.
     *
     * @generated from field: bool used_vectors = 2;
     */
    usedVectors: boolean;
};
/**
 * Describes the message recap.v1.RecallResponse.
 * Use `create(RecallResponseSchema)` to create a new message.
 */
export declare const RecallResponseSchema: GenMessage<RecallResponse>;
/**
 * One passage found.
 *
 * @generated from message recap.v1.RecallHit
 */
export type RecallHit = Message$1<"recap.v1.RecallHit"> & {
    /**
     * The message the passage is from (for a scene recap, the scene-break
     * message that carries it).
     *
     * @generated from field: string message_id = 1;
     */
    messageId: string;
    /**
     * The passage.
     *
     * @generated from field: string text = 2;
     */
    text: string;
    /**
     * Its BM25 score (0: no query word in it).
     *
     * @generated from field: double keyword_score = 3;
     */
    keywordScore: number;
    /**
     * Its cosine similarity with the query (unset: no vector for it or the
     * query).
     *
     * @generated from field: optional double vector_score = 4;
     */
    vectorScore?: number | undefined;
    /**
     * The fused score, 0..=1: 1.0 means the best of every ranking used.
     *
     * @generated from field: double score = 5;
     */
    score: number;
    /**
     * Its tokens, counted with the chat's tokenizer.
     *
     * @generated from field: uint32 tokens = 6;
     */
    tokens: number;
    /**
     * Whether the passage is a scene recap (otherwise a message's text).
     *
     * @generated from field: bool scene_recap = 7;
     */
    sceneRecap: boolean;
    /**
     * Which part of its text (0: the first); a long text is cut into
     * passages of at most `recall_chunk_chars` characters.
     *
     * @generated from field: uint32 part = 8;
     */
    part: number;
    /**
     * The chat the passage is from: the request's, or one of its
     * `recall_chats`.
     *
     * @generated from field: string chat_id = 9;
     */
    chatId: string;
};
/**
 * Describes the message recap.v1.RecallHit.
 * Use `create(RecallHitSchema)` to create a new message.
 */
export declare const RecallHitSchema: GenMessage<RecallHit>;
/**
 * Where an injection goes in the prompt (SillyTavern's extension_prompt_types).
 *
 * @generated from enum recap.v1.InjectionPosition
 */
export declare enum InjectionPosition {
    /**
     * Not a position. Refused in requests (INVALID_ARGUMENT); never returned.
     *
     * @generated from enum value: INJECTION_POSITION_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * Never inserted (SillyTavern NONE = -1).
     *
     * @generated from enum value: INJECTION_POSITION_NONE = 1;
     */
    NONE = 1,
    /**
     * Right after the main prompt / story string (SillyTavern IN_PROMPT = 0).
     * Also the position of every disabled chat's (empty) injection.
     *
     * @generated from enum value: INJECTION_POSITION_IN_PROMPT = 2;
     */
    IN_PROMPT = 2,
    /**
     * Inside the chat history at `depth` (SillyTavern IN_CHAT = 1).
     *
     * @generated from enum value: INJECTION_POSITION_IN_CHAT = 3;
     */
    IN_CHAT = 3,
    /**
     * Before the main prompt (SillyTavern BEFORE_PROMPT = 2). The default.
     *
     * @generated from enum value: INJECTION_POSITION_BEFORE_PROMPT = 4;
     */
    BEFORE_PROMPT = 4
}
/**
 * Describes the enum recap.v1.InjectionPosition.
 */
export declare const InjectionPositionSchema: GenEnum<InjectionPosition>;
/**
 * The role of an injected message (SillyTavern's extension_prompt_roles).
 *
 * @generated from enum recap.v1.InjectionRole
 */
export declare enum InjectionRole {
    /**
     * Not a role. Refused in requests (INVALID_ARGUMENT); never returned.
     *
     * @generated from enum value: INJECTION_ROLE_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * System message (SillyTavern SYSTEM = 0). The default.
     *
     * @generated from enum value: INJECTION_ROLE_SYSTEM = 1;
     */
    SYSTEM = 1,
    /**
     * User message (SillyTavern USER = 1).
     *
     * @generated from enum value: INJECTION_ROLE_USER = 2;
     */
    USER = 2,
    /**
     * Assistant message (SillyTavern ASSISTANT = 2).
     *
     * @generated from enum value: INJECTION_ROLE_ASSISTANT = 3;
     */
    ASSISTANT = 3
}
/**
 * Describes the enum recap.v1.InjectionRole.
 */
export declare const InjectionRoleSchema: GenEnum<InjectionRole>;
/**
 * How `message_recap_context_limit` is read. Unset means ABSOLUTE.
 *
 * @generated from enum recap.v1.RecapContextType
 */
export declare enum RecapContextType {
    /**
     * Not a type. Refused in requests (INVALID_ARGUMENT); never returned. To
     * get ABSOLUTE, set it or leave the field unset.
     *
     * @generated from enum value: RECAP_CONTEXT_TYPE_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * floor(max_context_tokens * limit / 100) tokens. Needs
     * `max_context_tokens` whenever a limit is set (else INVALID_ARGUMENT).
     *
     * @generated from enum value: RECAP_CONTEXT_TYPE_PERCENT = 1;
     */
    PERCENT = 1,
    /**
     * `limit` tokens. The default.
     *
     * @generated from enum value: RECAP_CONTEXT_TYPE_ABSOLUTE = 2;
     */
    ABSOLUTE = 2
}
/**
 * Describes the enum recap.v1.RecapContextType.
 */
export declare const RecapContextTypeSchema: GenEnum<RecapContextType>;
/**
 * The BPE vocabulary used to count tokens.
 * How a job asks the LLM for a JSON answer (Settings.llm_structured_output).
 *
 * @generated from enum recap.v1.StructuredOutput
 */
export declare enum StructuredOutput {
    /**
     * Not a choice. Refused in requests (INVALID_ARGUMENT); never returned.
     *
     * @generated from enum value: STRUCTURED_OUTPUT_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * The answer's JSON schema (`response_format` `json_schema`, strict);
     * when the endpoint answers 400 naming `response_format` or the schema,
     * `json_object`, then no `response_format`, remembered per endpoint and
     * model while the server runs. The default.
     *
     * @generated from enum value: STRUCTURED_OUTPUT_AUTO = 1;
     */
    AUTO = 1,
    /**
     * Always the answer's JSON schema; an endpoint that refuses it fails the
     * job.
     *
     * @generated from enum value: STRUCTURED_OUTPUT_JSON_SCHEMA = 2;
     */
    JSON_SCHEMA = 2,
    /**
     * Always `response_format` `json_object` (any JSON object).
     *
     * @generated from enum value: STRUCTURED_OUTPUT_JSON_OBJECT = 3;
     */
    JSON_OBJECT = 3,
    /**
     * No `response_format`; the answer's JSON is looked for in its text.
     *
     * @generated from enum value: STRUCTURED_OUTPUT_OFF = 4;
     */
    OFF = 4
}
/**
 * Describes the enum recap.v1.StructuredOutput.
 */
export declare const StructuredOutputSchema: GenEnum<StructuredOutput>;
/**
 * Which request field carries the answer's token limit
 * (Settings.llm_max_tokens_field).
 *
 * @generated from enum recap.v1.MaxTokensField
 */
export declare enum MaxTokensField {
    /**
     * Not a choice. Refused in requests (INVALID_ARGUMENT); never returned.
     *
     * @generated from enum value: MAX_TOKENS_FIELD_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * `max_tokens`; `max_completion_tokens` when the endpoint answers 400
     * naming `max_tokens`, remembered per endpoint and model while the server
     * runs. The default.
     *
     * @generated from enum value: MAX_TOKENS_FIELD_AUTO = 1;
     */
    AUTO = 1,
    /**
     * Always `max_tokens`.
     *
     * @generated from enum value: MAX_TOKENS_FIELD_MAX_TOKENS = 2;
     */
    MAX_TOKENS = 2,
    /**
     * Always `max_completion_tokens` (OpenAI's newer models).
     *
     * @generated from enum value: MAX_TOKENS_FIELD_MAX_COMPLETION_TOKENS = 3;
     */
    MAX_COMPLETION_TOKENS = 3
}
/**
 * Describes the enum recap.v1.MaxTokensField.
 */
export declare const MaxTokensFieldSchema: GenEnum<MaxTokensField>;
/**
 * @generated from enum recap.v1.Tokenizer
 */
export declare enum Tokenizer {
    /**
     * Not a tokenizer. Refused in requests (INVALID_ARGUMENT); never returned.
     *
     * @generated from enum value: TOKENIZER_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * tiktoken o200k_base (GPT-4o family). The default.
     *
     * @generated from enum value: TOKENIZER_O200K_BASE = 1;
     */
    O200K_BASE = 1,
    /**
     * tiktoken cl100k_base (GPT-4, GPT-3.5).
     *
     * @generated from enum value: TOKENIZER_CL100K_BASE = 2;
     */
    CL100K_BASE = 2,
    /**
     * tiktoken p50k_base (Codex, text-davinci-002/003).
     *
     * @generated from enum value: TOKENIZER_P50K_BASE = 3;
     */
    P50K_BASE = 3,
    /**
     * tiktoken r50k_base (GPT-3).
     *
     * @generated from enum value: TOKENIZER_R50K_BASE = 4;
     */
    R50K_BASE = 4,
    /**
     * A model's own tokenizer (Llama, Mistral, Qwen, Claude...): the Hugging
     * Face `tokenizer.json` that Settings.tokenizer_name names in the server's
     * --tokenizers-dir, counted without special tokens.
     *
     * @generated from enum value: TOKENIZER_HUGGING_FACE = 5;
     */
    HUGGING_FACE = 5,
    /**
     * The LLM endpoint's own tokenizer (--llm-url's server: llama.cpp's and
     * vLLM's POST /tokenize), asked once per text and remembered (at most
     * --max-cached-token-counts texts). A text not counted yet is estimated
     * with o200k_base, and the chat is refreshed again once its count arrives
     * (REFRESH_TRIGGER_TOKENS_COUNTED). Needs --llm-url (else
     * FAILED_PRECONDITION).
     *
     * @generated from enum value: TOKENIZER_LLM_ENDPOINT = 6;
     */
    LLM_ENDPOINT = 6
}
/**
 * Describes the enum recap.v1.Tokenizer.
 */
export declare const TokenizerSchema: GenEnum<Tokenizer>;
/**
 * How character lorebooks and global lorebooks are ordered against each
 * other (Settings.world_info_character_strategy; SillyTavern's
 * world_info_character_strategy). The chat's book and the persona's book
 * always come first, whatever the strategy.
 *
 * @generated from enum recap.v1.WorldInfoCharacterStrategy
 */
export declare enum WorldInfoCharacterStrategy {
    /**
     * Not a strategy. Refused in requests (INVALID_ARGUMENT); never returned.
     *
     * @generated from enum value: WORLD_INFO_CHARACTER_STRATEGY_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * Character and global entries merged and sorted by `order` (SillyTavern
     * 0, "Sorted Evenly").
     *
     * @generated from enum value: WORLD_INFO_CHARACTER_STRATEGY_EVENLY = 1;
     */
    EVENLY = 1,
    /**
     * Character entries, then global entries (SillyTavern 1, "Character Lore
     * First"). The default.
     *
     * @generated from enum value: WORLD_INFO_CHARACTER_STRATEGY_CHARACTER_FIRST = 2;
     */
    CHARACTER_FIRST = 2,
    /**
     * Global entries, then character entries (SillyTavern 2, "Global Lore
     * First").
     *
     * @generated from enum value: WORLD_INFO_CHARACTER_STRATEGY_GLOBAL_FIRST = 3;
     */
    GLOBAL_FIRST = 3
}
/**
 * Describes the enum recap.v1.WorldInfoCharacterStrategy.
 */
export declare const WorldInfoCharacterStrategySchema: GenEnum<WorldInfoCharacterStrategy>;
/**
 * What caused a refresh. A debounced burst reports its last event.
 *
 * @generated from enum recap.v1.RefreshTrigger
 */
export declare enum RefreshTrigger {
    /**
     * Only in an Injection with revision 0 (the chat was never refreshed).
     *
     * @generated from enum value: REFRESH_TRIGGER_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * A chat_changed event (immediate).
     *
     * @generated from enum value: REFRESH_TRIGGER_CHAT_CHANGED = 1;
     */
    CHAT_CHANGED = 1,
    /**
     * A message_sent event (debounced).
     *
     * @generated from enum value: REFRESH_TRIGGER_MESSAGE_SENT = 2;
     */
    MESSAGE_SENT = 2,
    /**
     * A message_received event (debounced).
     *
     * @generated from enum value: REFRESH_TRIGGER_MESSAGE_RECEIVED = 3;
     */
    MESSAGE_RECEIVED = 3,
    /**
     * A message_edited event (debounced).
     *
     * @generated from enum value: REFRESH_TRIGGER_MESSAGE_EDITED = 4;
     */
    MESSAGE_EDITED = 4,
    /**
     * A message_deleted event (immediate, after the running-recap cleanup).
     *
     * @generated from enum value: REFRESH_TRIGGER_MESSAGE_DELETED = 5;
     */
    MESSAGE_DELETED = 5,
    /**
     * A message_swiped event (debounced).
     *
     * @generated from enum value: REFRESH_TRIGGER_MESSAGE_SWIPED = 6;
     */
    MESSAGE_SWIPED = 6,
    /**
     * A more_messages_loaded event (immediate).
     *
     * @generated from enum value: REFRESH_TRIGGER_MORE_MESSAGES_LOADED = 7;
     */
    MORE_MESSAGES_LOADED = 7,
    /**
     * A refresh_requested event or the Refresh RPC (immediate).
     *
     * @generated from enum value: REFRESH_TRIGGER_REFRESH_REQUESTED = 8;
     */
    REFRESH_REQUESTED = 8,
    /**
     * SetMessageData or ClearMemory (debounced).
     *
     * @generated from enum value: REFRESH_TRIGGER_MESSAGE_DATA_CHANGED = 9;
     */
    MESSAGE_DATA_CHANGED = 9,
    /**
     * UpdateSettings or SetChatEnabled (immediate; a global change refreshes
     * every known chat).
     *
     * @generated from enum value: REFRESH_TRIGGER_SETTINGS_CHANGED = 10;
     */
    SETTINGS_CHANGED = 10,
    /**
     * AddRunningRecap, SelectRunningRecap or DeleteRunningRecap (immediate).
     *
     * @generated from enum value: REFRESH_TRIGGER_RUNNING_RECAP_CHANGED = 11;
     */
    RUNNING_RECAP_CHANGED = 11,
    /**
     * A debounced refresh that a restart found still pending (run once at
     * server start).
     *
     * @generated from enum value: REFRESH_TRIGGER_STARTUP = 12;
     */
    STARTUP = 12,
    /**
     * recapd applied a recap it wrote itself (RecapService jobs: a scene
     * break found, a scene recap, a running-recap merge or a message recap;
     * immediate). Clients built before this value existed see an unknown
     * enum number.
     *
     * @generated from enum value: REFRESH_TRIGGER_RECAP_GENERATED = 13;
     */
    RECAP_GENERATED = 13,
    /**
     * Not a refresh: the chat was deleted (DeleteChat, or --chat-retention);
     * only in an Injection with `deleted` set.
     *
     * @generated from enum value: REFRESH_TRIGGER_CHAT_DELETED = 14;
     */
    CHAT_DELETED = 14,
    /**
     * recapd indexed passages of the chat for recall (vectors from the
     * embeddings endpoint arrived for the messages the recall tier's query
     * is made of, or the chat's index became complete; immediate). Only
     * while `recall_enabled`.
     *
     * @generated from enum value: REFRESH_TRIGGER_RECALL_INDEXED = 15;
     */
    RECALL_INDEXED = 15,
    /**
     * The LLM endpoint counted the tokens of texts that the chat's previous
     * refresh had to estimate (the TOKENIZER_LLM_ENDPOINT tokenizer;
     * immediate).
     *
     * @generated from enum value: REFRESH_TRIGGER_TOKENS_COUNTED = 16;
     */
    TOKENS_COUNTED = 16,
    /**
     * A search for the recall tier of a chat of more than
     * --recall-inline-passages passages, run in the background so that the
     * chat's refreshes never wait for it, finished (immediate): the tier
     * now holds what the chat's latest moment finds. Only while
     * `recall_enabled`.
     *
     * @generated from enum value: REFRESH_TRIGGER_RECALL_SEARCHED = 17;
     */
    RECALL_SEARCHED = 17
}
/**
 * Describes the enum recap.v1.RefreshTrigger.
 */
export declare const RefreshTriggerSchema: GenEnum<RefreshTrigger>;
/**
 * How the prompt is assembled.
 *
 * @generated from enum recap.v1.PromptMode
 */
export declare enum PromptMode {
    /**
     * Invalid in requests (INVALID_ARGUMENT).
     *
     * @generated from enum value: PROMPT_MODE_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * One text (BEFORE_PROMPT text, story string, IN_PROMPT text) plus the
     * history messages.
     *
     * @generated from enum value: PROMPT_MODE_TEXT_COMPLETION = 1;
     */
    TEXT_COMPLETION = 1,
    /**
     * Messages only: BEFORE_PROMPT messages, the main prompt, IN_PROMPT
     * messages, then the history.
     *
     * @generated from enum value: PROMPT_MODE_CHAT_COMPLETION = 2;
     */
    CHAT_COMPLETION = 2
}
/**
 * Describes the enum recap.v1.PromptMode.
 */
export declare const PromptModeSchema: GenEnum<PromptMode>;
/**
 * What a job does.
 *
 * @generated from enum recap.v1.JobKind
 */
export declare enum JobKind {
    /**
     * @generated from enum value: JOB_KIND_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * Looks for a scene break among the open scene's visible messages.
     *
     * @generated from enum value: JOB_KIND_DETECT_SCENE_BREAK = 1;
     */
    DETECT_SCENE_BREAK = 1,
    /**
     * Writes a break message's scene recap and scene name.
     *
     * @generated from enum value: JOB_KIND_SCENE_RECAP = 2;
     */
    SCENE_RECAP = 2,
    /**
     * Merges a break message's scene recap into the running recap (a new
     * version; current unless the current version ends at a later scene:
     * then the later scenes are merged again on top of it, and the merge
     * that reaches the current version's scene becomes current).
     *
     * @generated from enum value: JOB_KIND_RUNNING_RECAP = 3;
     */
    RUNNING_RECAP = 3,
    /**
     * Writes one message's `memory`.
     *
     * @generated from enum value: JOB_KIND_MESSAGE_RECAP = 4;
     */
    MESSAGE_RECAP = 4,
    /**
     * Reads the scene ending at break `message_id` (and its recap) and
     * finds the entities it establishes or changes; new ones are written to
     * the chat's lorebook at once, known ones merged (JOB_KIND_LORE_MERGE).
     *
     * @generated from enum value: JOB_KIND_LORE_EXTRACT = 5;
     */
    LORE_EXTRACT = 5,
    /**
     * Finds which entry an entity already has when the deterministic match
     * is ambiguous, or absent while similar entries exist.
     *
     * @generated from enum value: JOB_KIND_LORE_RESOLVE = 6;
     */
    LORE_RESOLVE = 6,
    /**
     * Merges an entity's new facts into its entry.
     *
     * @generated from enum value: JOB_KIND_LORE_MERGE = 7;
     */
    LORE_MERGE = 7,
    /**
     * Rewrites an entry past `lore_compaction_threshold` tokens shorter.
     *
     * @generated from enum value: JOB_KIND_LORE_COMPACT = 8;
     */
    LORE_COMPACT = 8,
    /**
     * Asks the embeddings endpoint (--embedding-url) for the vectors of the
     * chat's passages that have none, a batch (--embedding-batch-size) at a
     * time, newest first, until every passage has one; only while the chat
     * has `recall_enabled`. Passages of a message edited, swiped or deleted
     * meanwhile are discarded and asked again. Runs beside the chat's other
     * jobs, with its own concurrency (--embedding-concurrency).
     *
     * @generated from enum value: JOB_KIND_INDEX = 9;
     */
    INDEX = 9,
    /**
     * Rebuilds the running recap from the chat's scene recaps at once
     * (RegenerateRunningRecap); `message_id` is empty.
     *
     * @generated from enum value: JOB_KIND_REGENERATE_RUNNING_RECAP = 10;
     */
    REGENERATE_RUNNING_RECAP = 10
}
/**
 * Describes the enum recap.v1.JobKind.
 */
export declare const JobKindSchema: GenEnum<JobKind>;
/**
 * Where a job is. PENDING and RUNNING are not terminal; the others are.
 *
 * @generated from enum recap.v1.JobState
 */
export declare enum JobState {
    /**
     * @generated from enum value: JOB_STATE_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * Waiting: to run, for its back-off after a failed attempt, for the job
     * it depends on, or for its chat to be enabled.
     *
     * @generated from enum value: JOB_STATE_PENDING = 1;
     */
    PENDING = 1,
    /**
     * A request to the LLM is under way.
     *
     * @generated from enum value: JOB_STATE_RUNNING = 2;
     */
    RUNNING = 2,
    /**
     * Its result was applied (or, for a detection, no break was found).
     *
     * @generated from enum value: JOB_STATE_SUCCEEDED = 3;
     */
    SUCCEEDED = 3,
    /**
     * It failed --llm-max-attempts times, or the LLM refused it for good
     * (400, 401, 403, 404, 422); `last_error` says why.
     *
     * @generated from enum value: JOB_STATE_FAILED = 4;
     */
    FAILED = 4,
    /**
     * CancelJob, its message was removed, or the job it waited for failed or
     * was cancelled; `result` says why.
     *
     * @generated from enum value: JOB_STATE_CANCELLED = 5;
     */
    CANCELLED = 5,
    /**
     * Its inputs changed before its result could be applied, so nothing was
     * applied; the work was queued afresh when still needed.
     *
     * @generated from enum value: JOB_STATE_DISCARDED = 6;
     */
    DISCARDED = 6
}
/**
 * Describes the enum recap.v1.JobState.
 */
export declare const JobStateSchema: GenEnum<JobState>;
/**
 * Reports what happens in the backend's chats.
 *
 * @generated from service recap.v1.EventService
 */
export declare const EventService: GenService<{
    /**
     * Applies one event. Answers once the event is durable and, for an
     * immediate trigger, once its refresh has run.
     * (A GetInjection made after the answer sees that refresh; debounced
     * events answer once durable, `debounce_ms` of quiet later one refresh
     * covers the whole burst.)
     * Errors:
     * - INVALID_ARGUMENT: `event` absent; `event.kind` unset; a bad
     *   `event.chat_id` or message id; a text over --max-text-bytes; a
     *   `swipe_id` that does not index `swipes` (or is not 0 without swipes);
     *   message_swiped.swipe_id above the number of swipes; message_sent /
     *   message_received without `message`.
     * - NOT_FOUND: message_edited, message_deleted or message_swiped naming
     *   an unknown chat or message.
     * - ALREADY_EXISTS: a message id already in the chat (message_sent,
     *   message_received, more_messages_loaded) or repeated in one list
     *   (chat_changed, more_messages_loaded).
     * - RESOURCE_EXHAUSTED: the chat would hold more than
     *   --max-messages-per-chat messages; an event that would create a chat
     *   when the server holds --max-chats chats.
     * - ABORTED: PostgreSQL store, other replicas kept changing the chat
     *   first; nothing was applied.
     * - UNAVAILABLE: storage failed. SQLite: nothing was applied. PostgreSQL:
     *   the event may have been applied (see the conventions at the top).
     * - INTERNAL: the chat's stored data could not be read back, or the
     *   store failed unexpectedly while committing.
     *
     * @generated from rpc recap.v1.EventService.Publish
     */
    publish: {
        methodKind: "unary";
        input: typeof PublishRequestSchema;
        output: typeof PublishResponseSchema;
    };
}>;
/**
 * Stores the recaps the backend's LLM writes.
 * Every RPC: INVALID_ARGUMENT for a bad id or over-long text, NOT_FOUND for
 * an unknown chat, message or version, UNAVAILABLE when storage failed
 * (for a call that writes on the PostgreSQL store, it may have been
 * applied: see the conventions at the top), INTERNAL when stored data could
 * not be read back or the store failed unexpectedly while committing. The
 * calls that write can also answer ABORTED (PostgreSQL store: other
 * replicas kept changing the chat first; nothing was applied).
 *
 * @generated from service recap.v1.MemoryService
 */
export declare const MemoryService: GenService<{
    /**
     * Sets the present fields of `data` on the message's current swipe and
     * answers with that swipe's whole MessageData after the change.
     * Debounced refresh (trigger MESSAGE_DATA_CHANGED; none while the chat is
     * disabled); answers once the change is durable.
     * Errors: INVALID_ARGUMENT (bad `chat_id` / `message_id`; a `data.*`
     * string over --max-text-bytes), NOT_FOUND (unknown chat or message),
     * ABORTED, UNAVAILABLE, INTERNAL. With `edit`, INVALID_ARGUMENT on
     * `data.memory` when it is unset.
     *
     * @generated from rpc recap.v1.MemoryService.SetMessageData
     */
    setMessageData: {
        methodKind: "unary";
        input: typeof SetMessageDataRequestSchema;
        output: typeof MessageDataSchema;
    };
    /**
     * The message's current-swipe MessageData, or that of `swipe_id`.
     * Read-only, no refresh.
     * Errors: INVALID_ARGUMENT (bad `chat_id` / `message_id`; `swipe_id` not
     * a swipe of the message), NOT_FOUND (unknown chat or message),
     * UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.GetMessageData
     */
    getMessageData: {
        methodKind: "unary";
        input: typeof GetMessageDataRequestSchema;
        output: typeof MessageDataSchema;
    };
    /**
     * Makes another scene-recap version of the message's current swipe
     * current: `scene_recap_memory` becomes its text. Answers with the
     * swipe's MessageData after the change. Debounced refresh (trigger
     * MESSAGE_DATA_CHANGED), as SetMessageData.
     * Errors: INVALID_ARGUMENT (bad ids; `index` not a version of the
     * message), NOT_FOUND (unknown chat or message), ABORTED, UNAVAILABLE,
     * INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.SelectSceneRecapVersion
     */
    selectSceneRecapVersion: {
        methodKind: "unary";
        input: typeof SelectSceneRecapVersionRequestSchema;
        output: typeof MessageDataSchema;
    };
    /**
     * Unsets memory, error, reasoning and prefill; sets edited and exclude to false.
     * Acts on the current swipe and answers with its MessageData after the
     * change. Debounced refresh (trigger MESSAGE_DATA_CHANGED; none while the
     * chat is disabled).
     * Errors: INVALID_ARGUMENT (bad `chat_id` / `message_id`), NOT_FOUND
     * (unknown chat or message), ABORTED, UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.ClearMemory
     */
    clearMemory: {
        methodKind: "unary";
        input: typeof ClearMemoryRequestSchema;
        output: typeof MessageDataSchema;
    };
    /**
     * Adds a version (highest existing + 1, first is 0), makes it current and
     * answers with it. Immediate refresh (trigger RUNNING_RECAP_CHANGED), run
     * before the answer.
     * Errors: INVALID_ARGUMENT (bad `chat_id`; bad non-empty
     * `prev_scene_message_id` / `new_scene_message_id`; `content` over
     * --max-text-bytes; version 4294967295 already in use), NOT_FOUND
     * (unknown chat or scene message), ABORTED, UNAVAILABLE (PostgreSQL
     * store: the version may have been added; a retry can add a second one),
     * INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.AddRunningRecap
     */
    addRunningRecap: {
        methodKind: "unary";
        input: typeof AddRunningRecapRequestSchema;
        output: typeof RunningRecapVersionSchema;
    };
    /**
     * Answers with the versions after the change.
     * Makes `version` current (also when it already is). Immediate refresh
     * (trigger RUNNING_RECAP_CHANGED), run before the answer.
     * Errors: INVALID_ARGUMENT (bad `chat_id`), NOT_FOUND (unknown chat or
     * version), ABORTED, UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.SelectRunningRecap
     */
    selectRunningRecap: {
        methodKind: "unary";
        input: typeof SelectRunningRecapRequestSchema;
        output: typeof ListRunningRecapsResponseSchema;
    };
    /**
     * Answers with the versions after the change.
     * Deletes `version`; if it was current, the highest remaining version
     * becomes current (none left: no current version, empty injection).
     * Immediate refresh (trigger RUNNING_RECAP_CHANGED), run before the answer.
     * Errors: INVALID_ARGUMENT (bad `chat_id`), NOT_FOUND (unknown chat or
     * version), ABORTED, UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.DeleteRunningRecap
     */
    deleteRunningRecap: {
        methodKind: "unary";
        input: typeof DeleteRunningRecapRequestSchema;
        output: typeof ListRunningRecapsResponseSchema;
    };
    /**
     * The chat's versions and current version. Read-only, no refresh.
     * Errors: INVALID_ARGUMENT (bad `chat_id`), NOT_FOUND (unknown chat),
     * UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.ListRunningRecaps
     */
    listRunningRecaps: {
        methodKind: "unary";
        input: typeof ListRunningRecapsRequestSchema;
        output: typeof ListRunningRecapsResponseSchema;
    };
    /**
     * Loads a SillyTavern chat file (JSONL: a metadata line, then one message
     * per line) as chat `chat_id`, replacing an existing chat of that id:
     * messages (id `extra.recapd_message_id` when present, as recapd's export
     * writes it, else m0, m1, ... by position; an explicit id wins: a message
     * whose id by position is another line's `recapd_message_id` gets a fresh
     * id, reported in `warnings`; the same `recapd_message_id` on two lines
     * is INVALID_ARGUMENT naming both lines) with their swipes and
     * ST-Auto-Recap data, and the running-recap versions with their current
     * version (scene indices become the ids of the messages at those
     * indices). Every member recapd does not interpret (header,
     * chat_metadata, message, extra, swipe_info entries, versions) is kept as
     * the file wrote it, for the export; a message's kept members count
     * against --max-text-bytes together, and so do the header's. An `is_system` message inside
     * the prefix auto-hide hides (the file's visible scene breaks and the
     * chat's auto_hide_scene_count) is taken as auto-hidden, any other as
     * hidden by hand. Reads what SillyTavern
     * writes: a leading UTF-8 byte-order mark is skipped; a file whose first
     * line is a message (older group chats and their backups) has no header
     * and every line is a message; `swipe_id` equal to the number of swipes
     * makes `mes` one more swipe, the current one. Repairs instead of
     * refusing, each reported in `warnings`: a version whose scene index
     * points past the last message is kept with no scene reference; a version
     * number used again becomes the highest number + 1, in file order.
     * Immediate refresh (trigger CHAT_CHANGED). Errors: INVALID_ARGUMENT (bad
     * `chat_id`; a file that is not UTF-8 or does not parse, naming the line
     * in either case; a text over
     * --max-text-bytes; nothing of it is stored), RESOURCE_EXHAUSTED (more
     * messages than --max-messages-per-chat; a new chat when the server holds
     * --max-chats chats), ALREADY_EXISTS (with branch_from_main_chat, a chat
     * that exists), FAILED_PRECONDITION (with branch_from_main_chat, no free
     * name for the chat book's copy), ABORTED, UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.ImportChat
     */
    importChat: {
        methodKind: "unary";
        input: typeof ImportChatRequestSchema;
        output: typeof ImportChatResponseSchema;
    };
    /**
     * Writes a chat as a SillyTavern chat file: an imported chat gets back
     * what its file had (every kept member, its own swipes and swipe_id
     * while no API call changed the message, no header line for a
     * header-less file until there are running recaps to write, its
     * running-recap versions in the file's order, then those added through
     * the API), `is_system`
     * being true for messages hidden by hand or by auto-hide; messages made
     * through the API get SillyTavern's shape (see the README). Whole in one
     * message (a
     * large chat's can pass a client's message size limit, 4 MiB by default
     * in most gRPC libraries: ExportChatStream has none). Read-only.
     * Errors: INVALID_ARGUMENT (bad `chat_id`), NOT_FOUND (unknown chat),
     * UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.ExportChat
     */
    exportChat: {
        methodKind: "unary";
        input: typeof ExportChatRequestSchema;
        output: typeof ExportChatResponseSchema;
    };
    /**
     * ImportChat for a file of any size: the file comes as a stream of
     * chunks of its bytes, split anywhere (inside a line or a UTF-8
     * character alike); lines are numbered across chunks. The first message
     * carries `chat_id` (later ones' is ignored); every message carries a
     * chunk, each at most --max-request-bytes (64 KiB to 1 MiB is a good
     * size). Size is bounded per message (--max-text-bytes,
     * --max-messages-per-chat; a line of the file at most 64 times
     * --max-text-bytes), not per file. The whole file is read and
     * checked before anything is stored; then the chat is replaced in one
     * transaction: a reader sees the old chat or the new one, never a mix.
     * A failed import (a bad line, the client gone or cancelled mid-stream,
     * a store failure) stores nothing: an existing chat stays as it was, a
     * new one is not created and takes no place under --max-chats. Same
     * reading, repairs, `warnings`, refresh and errors as ImportChat, plus
     * INVALID_ARGUMENT (naming `chat_id`) for a stream with no message or a
     * first message without a valid `chat_id`.
     *
     * @generated from rpc recap.v1.MemoryService.ImportChatStream
     */
    importChatStream: {
        methodKind: "client_streaming";
        input: typeof ImportChatStreamRequestSchema;
        output: typeof ImportChatResponseSchema;
    };
    /**
     * ExportChat for a chat of any size: the file as a stream of chunks of
     * at most 1 MiB each, split anywhere (concatenate them; a chunk may end
     * inside a line or a UTF-8 character). The chunks are all of one
     * snapshot of the chat, taken when the call starts: changes made while
     * the stream is read are not in it. Read-only.
     * Errors (before the first chunk): INVALID_ARGUMENT (bad `chat_id`),
     * NOT_FOUND (unknown chat), UNAVAILABLE, INTERNAL. A stream that ends
     * with an error (UNAVAILABLE when the server shuts down mid-export) did
     * not carry the whole file; only a stream that ends with OK did.
     *
     * @generated from rpc recap.v1.MemoryService.ExportChatStream
     */
    exportChatStream: {
        methodKind: "server_streaming";
        input: typeof ExportChatStreamRequestSchema;
        output: typeof ExportChatStreamResponseSchema;
    };
    /**
     * Erases a chat of the caller's tenant: its messages with their swipes
     * and data, its running-recap versions, its own settings and enabled
     * state, its owed and pending refreshes, and its jobs (every state;
     * pending and running ones end, WatchJobs readers see them CANCELLED).
     * Answers once the erasure is durable, with the revision of the chat's
     * last injection: every stream naming the chat, and every all-chats
     * stream of the tenant, receives that Injection with `deleted` set,
     * empty text and trigger CHAT_DELETED, and stays open. What stays is a
     * tombstone (the chat id and its last revisions, no content): a chat
     * re-created under the same id by a later event continues its revisions
     * above the deleted one's, also across restarts and replicas. Every read
     * of a deleted chat is NOT_FOUND until an event creates it again; it
     * frees its place under --max-chats.
     * Errors: INVALID_ARGUMENT (bad `chat_id`), NOT_FOUND (unknown chat,
     * also one already deleted), ABORTED, UNAVAILABLE (PostgreSQL store: the
     * deletion may have been applied), INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.DeleteChat
     */
    deleteChat: {
        methodKind: "unary";
        input: typeof DeleteChatRequestSchema;
        output: typeof DeleteChatResponseSchema;
    };
    /**
     * The chats of the caller's tenant, ordered by chat id (as bytes), a page
     * at a time. A chat is listed from the first event that names it until
     * it is deleted. Read-only.
     * Errors: INVALID_ARGUMENT (`page_size` over 1000, a `page_token` this
     * server did not give), UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.ListChats
     */
    listChats: {
        methodKind: "unary";
        input: typeof ListChatsRequestSchema;
        output: typeof ListChatsResponseSchema;
    };
    /**
     * Makes `new_chat_id` a branch of chat `chat_id` at its message
     * `message_id`, as SillyTavern's "Create branch" and checkpoints do, with
     * the memory that belongs to that point of the story: the messages up to
     * and including `message_id` (every swipe, their data: scene breaks and
     * scene recaps), the running-recap versions whose scene ends at or
     * before that message (the one current in the chat when it is kept,
     * else the latest kept; none when no scene ends there; a version that
     * names no scene is left out), the chat's own settings and enabled
     * state, its character and group (so its profile), its timed World Info
     * effects (one started after the branch's last message ends at the
     * branch's first scan, as in SillyTavern), a copy of its chat book (a
     * new book named by lore_book_name_template for the new chat, which the
     * branch's settings name and which is deleted with the branch when
     * lore_delete_book_with_chat is on), and the recall vectors of the
     * passages it keeps (nothing is embedded again). One commit: a failure
     * or a crash leaves no part of the branch. The two chats are independent
     * afterwards; ListChats names the parent. The branch is refreshed
     * (trigger CHAT_CHANGED) and its subscribers told.
     * Errors: INVALID_ARGUMENT (a bad id), NOT_FOUND (unknown chat, or no
     * such message in it), ALREADY_EXISTS (`new_chat_id` is a chat already,
     * or is `chat_id`), RESOURCE_EXHAUSTED (--max-chats,
     * --max-lorebooks-per-tenant), FAILED_PRECONDITION (no free name for the
     * book's copy), ABORTED, UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.BranchChat
     */
    branchChat: {
        methodKind: "unary";
        input: typeof BranchChatRequestSchema;
        output: typeof BranchChatResponseSchema;
    };
    /**
     * Makes `new_chat_id` a new chat that starts with the memory of chat
     * `from_chat_id`, as a long roleplay goes on in a new chat with the same
     * character: no message; as its first running-recap version (0, current)
     * the old chat's current running recap, its `carried_from_chat_id`
     * naming the old chat (none when the old chat has no current version),
     * so the new chat's own scenes merge on top of it; as its
     * world_info_chat_book the book the old chat uses (the same book, not a
     * copy); and recall_chats naming the old chat and the chats the old
     * chat's recall reaches (at most 100), so recall reaches the old chat's
     * story. Its character and group (so its profile) and its own enabled
     * state are the old chat's. One commit; the new chat is refreshed
     * (trigger CHAT_CHANGED).
     * Errors: INVALID_ARGUMENT (a bad id), NOT_FOUND (unknown
     * `from_chat_id`), ALREADY_EXISTS (`new_chat_id` is a chat already, or
     * is `from_chat_id`), RESOURCE_EXHAUSTED (--max-chats), ABORTED,
     * UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.MemoryService.StartChatFrom
     */
    startChatFrom: {
        methodKind: "unary";
        input: typeof StartChatFromRequestSchema;
        output: typeof StartChatFromResponseSchema;
    };
}>;
/**
 * Global and per-chat settings, and the per-chat on/off switch. Every call
 * accepts chat ids that have no events yet.
 *
 * Profiles: named settings patches of the tenant. A chat's settings
 * resolve as the defaults, then the global settings, then its profile,
 * then its own overrides. Its profile is the first that names an existing
 * profile of: its own `profile` setting (empty: no profile), its group's
 * binding, its character's binding, the global `profile`. Profiles,
 * bindings and groups are durable and shared by replicas. A change to
 * any of them refreshes every known chat of the tenant (trigger
 * SETTINGS_CHANGED), as a global UpdateSettings does, before the answer.
 * Their errors, beside those named: ABORTED (PostgreSQL store: other
 * replicas kept changing the tenant's settings first), UNAVAILABLE,
 * INTERNAL.
 *
 * @generated from service recap.v1.SettingsService
 */
export declare const SettingsService: GenService<{
    /**
     * The global settings (empty `chat_id`) or a chat's effective settings.
     * Read-only, no refresh. Never NOT_FOUND.
     * Errors: INVALID_ARGUMENT (bad non-empty `chat_id`), UNAVAILABLE,
     * INTERNAL.
     *
     * @generated from rpc recap.v1.SettingsService.GetSettings
     */
    getSettings: {
        methodKind: "unary";
        input: typeof GetSettingsRequestSchema;
        output: typeof SettingsSchema;
    };
    /**
     * First clears the fields named in `clear`, then sets the present fields
     * of `settings`; answers with the resulting global settings (empty
     * `chat_id`) or the chat's effective settings. Immediate refresh (trigger
     * SETTINGS_CHANGED), run before the answer: a global change refreshes
     * every known chat; a chat change refreshes that chat if it is known.
     * Errors: INVALID_ARGUMENT (bad non-empty `chat_id`; an UNSPECIFIED or
     * unknown enum; depth outside 0..=1000; a negative number; debounce_ms
     * over 3600000; a template over --max-text-bytes; an unknown name in
     * `clear`; a PERCENT limit without max_context_tokens in the result, for
     * a global change also in any chat's effective settings, the message
     * naming the chat), ABORTED (PostgreSQL store: other replicas kept
     * changing the same settings first; nothing was applied), UNAVAILABLE
     * (storage failed; retrying the same update is safe; for a global change
     * the settings may already be saved and some chats refreshed), INTERNAL.
     *
     * @generated from rpc recap.v1.SettingsService.UpdateSettings
     */
    updateSettings: {
        methodKind: "unary";
        input: typeof UpdateSettingsRequestSchema;
        output: typeof SettingsSchema;
    };
    /**
     * Sets the chat's own enabled state, or, while `use_global_toggle_state`
     * is on, the global `global_toggle_state` (see SetChatEnabledRequest).
     * Immediate refresh (trigger SETTINGS_CHANGED) of the chat if it is
     * known, or of every chat for the global switch, run before the answer.
     * Errors: INVALID_ARGUMENT (bad or empty `chat_id`), ABORTED,
     * UNAVAILABLE, INTERNAL. Never NOT_FOUND.
     *
     * @generated from rpc recap.v1.SettingsService.SetChatEnabled
     */
    setChatEnabled: {
        methodKind: "unary";
        input: typeof SetChatEnabledRequestSchema;
        output: typeof SetChatEnabledResponseSchema;
    };
    /**
     * Imports ST-Auto-Recap's own settings object (the JSON of its
     * extension settings, with SillyTavern's numeric positions and roles) as
     * the global settings (empty `chat_id`) or a chat's overrides, as
     * UpdateSettings would (same refresh). Keys recapd does not use are listed
     * in `ignored_keys`, never silently dropped. Errors: INVALID_ARGUMENT
     * (JSON that does not parse or is not an object, a value of the wrong
     * type or out of range, naming `json.<key>`; `json` over
     * --max-text-bytes), and those of UpdateSettings.
     *
     * @generated from rpc recap.v1.SettingsService.ImportSettings
     */
    importSettings: {
        methodKind: "unary";
        input: typeof ImportSettingsRequestSchema;
        output: typeof ImportSettingsResponseSchema;
    };
    /**
     * Creates or replaces a profile; answers it. Errors: INVALID_ARGUMENT
     * (a bad name; a settings field as UpdateSettings checks it, or the
     * global settings with the profile over them failing UpdateSettings'
     * checks; `settings.profile` present), RESOURCE_EXHAUSTED (a 101st
     * profile).
     *
     * @generated from rpc recap.v1.SettingsService.PutProfile
     */
    putProfile: {
        methodKind: "unary";
        input: typeof PutProfileRequestSchema;
        output: typeof ProfileSchema;
    };
    /**
     * One profile. Errors: INVALID_ARGUMENT (bad name), NOT_FOUND.
     *
     * @generated from rpc recap.v1.SettingsService.GetProfile
     */
    getProfile: {
        methodKind: "unary";
        input: typeof GetProfileRequestSchema;
        output: typeof ProfileSchema;
    };
    /**
     * Every profile and binding of the tenant. Read-only.
     *
     * @generated from rpc recap.v1.SettingsService.ListProfiles
     */
    listProfiles: {
        methodKind: "unary";
        input: typeof ListProfilesRequestSchema;
        output: typeof ListProfilesResponseSchema;
    };
    /**
     * Deletes a profile; its bindings and the chats naming it stay, and pass
     * it over until a profile of that name exists again. Errors:
     * INVALID_ARGUMENT, NOT_FOUND.
     *
     * @generated from rpc recap.v1.SettingsService.DeleteProfile
     */
    deleteProfile: {
        methodKind: "unary";
        input: typeof DeleteProfileRequestSchema;
        output: typeof DeleteProfileResponseSchema;
    };
    /**
     * Binds a profile to a character or a group, or unbinds (empty
     * `profile`). Errors: INVALID_ARGUMENT (no target, bad ids), NOT_FOUND
     * (no profile of that name), RESOURCE_EXHAUSTED (over 10000 bindings of
     * one kind).
     *
     * @generated from rpc recap.v1.SettingsService.BindProfile
     */
    bindProfile: {
        methodKind: "unary";
        input: typeof BindProfileRequestSchema;
        output: typeof BindProfileResponseSchema;
    };
    /**
     * Reads SillyTavern's group file and creates or replaces the group (its
     * name, members, disabled members and chats; its binding stays).
     * Errors: INVALID_ARGUMENT (JSON that does not parse or is not an
     * object, no string `id`, a member that is not a list of strings, an id
     * breaking the id rules, over the bounds; the message names
     * `json.<member>`), RESOURCE_EXHAUSTED (a 1001st group).
     *
     * @generated from rpc recap.v1.SettingsService.ImportGroup
     */
    importGroup: {
        methodKind: "unary";
        input: typeof ImportGroupRequestSchema;
        output: typeof GroupSchema;
    };
    /**
     * One group. Errors: INVALID_ARGUMENT, NOT_FOUND.
     *
     * @generated from rpc recap.v1.SettingsService.GetGroup
     */
    getGroup: {
        methodKind: "unary";
        input: typeof GetGroupRequestSchema;
        output: typeof GroupSchema;
    };
    /**
     * Every group of the tenant. Read-only.
     *
     * @generated from rpc recap.v1.SettingsService.ListGroups
     */
    listGroups: {
        methodKind: "unary";
        input: typeof ListGroupsRequestSchema;
        output: typeof ListGroupsResponseSchema;
    };
    /**
     * Replaces a group's disabled members. Errors: INVALID_ARGUMENT,
     * RESOURCE_EXHAUSTED.
     *
     * @generated from rpc recap.v1.SettingsService.SetGroupMembers
     */
    setGroupMembers: {
        methodKind: "unary";
        input: typeof SetGroupMembersRequestSchema;
        output: typeof GroupSchema;
    };
}>;
/**
 * Delivers injections: the latest one on demand, a refresh now, the
 * per-message inclusion, and a push stream of every refresh.
 *
 * @generated from service recap.v1.InjectionService
 */
export declare const InjectionService: GenService<{
    /**
     * The latest refresh's result. A known chat never refreshed answers
     * revision 0, empty text, placed where a refresh would place it now: its
     * configured position, depth, role and scan, or, while the chat is
     * disabled (for auto_recap_messages and auto_recap_recall: or the tier
     * is off), IN_PROMPT,
     * depth 0, SYSTEM, no scan, like every disabled injection. Read-only: a
     * pending debounced refresh is not run.
     * Errors: INVALID_ARGUMENT (bad `chat_id`; a `key` that is not one of
     * auto_recap_scene, auto_recap_messages, auto_recap_recall), NOT_FOUND
     * (unknown chat),
     * UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.InjectionService.GetInjection
     */
    getInjection: {
        methodKind: "unary";
        input: typeof GetInjectionRequestSchema;
        output: typeof InjectionSchema;
    };
    /**
     * Runs a refresh now (trigger REFRESH_REQUESTED, also for a disabled chat;
     * it covers pending debounced events) and answers with its result, once
     * durable and pushed to subscribers.
     * Errors: INVALID_ARGUMENT (bad `chat_id`), NOT_FOUND (unknown chat),
     * ABORTED, UNAVAILABLE (safe to retry: a retry at most refreshes once
     * more), INTERNAL.
     *
     * @generated from rpc recap.v1.InjectionService.Refresh
     */
    refresh: {
        methodKind: "unary";
        input: typeof RefreshRequestSchema;
        output: typeof InjectionSchema;
    };
    /**
     * Each message's inclusion, computed from the chat's current state
     * (including changes whose debounced refresh is pending) as a refresh
     * would compute it now, without making a refresh or changing the revision.
     * Errors: INVALID_ARGUMENT (bad `chat_id`), NOT_FOUND (unknown chat),
     * UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.InjectionService.GetInclusion
     */
    getInclusion: {
        methodKind: "unary";
        input: typeof GetInclusionRequestSchema;
        output: typeof GetInclusionResponseSchema;
    };
    /**
     * The current injection of each named chat that has one, then one per
     * refresh, in revision order per chat. Slow readers may skip revisions.
     * (They always end at the latest one and never slow publishers or other
     * subscribers.) Revision 0 is never sent. Empty `chat_ids`: every chat,
     * live updates only, no snapshot. The stream ends with OK after
     * `max_updates` messages or when the server shuts down.
     * Errors: INVALID_ARGUMENT (a bad id in `chat_ids`; more than 1000
     * `chat_ids`), RESOURCE_EXHAUSTED (--max-subscribers or
     * --max-subscribers-per-connection streams already open), UNAVAILABLE
     * (loading a named chat failed), INTERNAL (a named chat's stored data
     * could not be read back).
     *
     * @generated from rpc recap.v1.InjectionService.Subscribe
     */
    subscribe: {
        methodKind: "server_streaming";
        input: typeof SubscribeRequestSchema;
        output: typeof InjectionSchema;
    };
}>;
/**
 * Builds the prompt SillyTavern would build, so a backend need not
 * re-implement its placement rules.
 *
 * @generated from service recap.v1.PromptService
 */
export declare const PromptService: GenService<{
    /**
     * Errors: INVALID_ARGUMENT (bad chat id, enum, depth, empty key,
     * generation type, text over --max-text-bytes, a bad `message_id` or one
     * without `chat_id`), NOT_FOUND (unknown chat, or a `message_id` the
     * chat does not hold; the message says which), RESOURCE_EXHAUSTED (a
     * World Info scan needing more passes than --world-info-max-passes),
     * ABORTED (PostgreSQL: committing the timed effects kept losing to other
     * replicas), UNAVAILABLE and INTERNAL (with a `chat_id`: reading the chat
     * or committing its timed effects failed).
     *
     * @generated from rpc recap.v1.PromptService.RenderPrompt
     */
    renderPrompt: {
        methodKind: "unary";
        input: typeof RenderPromptRequestSchema;
        output: typeof RenderPromptResponseSchema;
    };
}>;
/**
 * Recaps written by recapd through an OpenAI-compatible LLM (the server's
 * --llm-url), as jobs on a durable queue: scene-break detection, scene
 * recaps, running-recap merges, message recaps, and the lorebook entries
 * of the lore jobs (JOB_KIND_LORE_*). Every job's result is
 * applied at most once, and only if what the job read is unchanged.
 *
 * Without --llm-url, the Generate* RPCs, DetectSceneBreaks and RetryJob
 * answer FAILED_PRECONDITION; the other RPCs work.
 *
 * @generated from service recap.v1.RecapService
 */
export declare const RecapService: GenService<{
    /**
     * Makes `message_id` a visible scene break if it is not one, and queues
     * its scene recap (then its merge, when `auto_running_recap` is on).
     * A non-terminal scene recap of that message is returned as it is.
     * Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION,
     * RESOURCE_EXHAUSTED (--max-jobs-per-chat), ABORTED, UNAVAILABLE,
     * INTERNAL.
     *
     * @generated from rpc recap.v1.RecapService.GenerateSceneRecap
     */
    generateSceneRecap: {
        methodKind: "unary";
        input: typeof GenerateSceneRecapRequestSchema;
        output: typeof JobSchema;
    };
    /**
     * Queues a detection over the chat's open scene now; it continues after
     * each break it finds. Errors as GenerateSceneRecap.
     *
     * @generated from rpc recap.v1.RecapService.DetectSceneBreaks
     */
    detectSceneBreaks: {
        methodKind: "unary";
        input: typeof DetectSceneBreaksRequestSchema;
        output: typeof JobSchema;
    };
    /**
     * Queues the merge of break message `message_id`'s scene recap into the
     * running recap. Errors as GenerateSceneRecap.
     *
     * @generated from rpc recap.v1.RecapService.GenerateRunningRecap
     */
    generateRunningRecap: {
        methodKind: "unary";
        input: typeof GenerateRunningRecapRequestSchema;
        output: typeof JobSchema;
    };
    /**
     * Queues one job that rebuilds the running recap from the chat's scene
     * recaps, in chat order, as the extension's bulk path does: every
     * visible break with a scene recap but the newest
     * `running_recap_exclude_latest` (when there are more), sent with the
     * merge's instructions (`running_recap_prompt`: the scenes, each under
     * a "[Scene N: name]" line, as its scene recap, and the current version
     * as the running recap it edits). The new version becomes current and
     * records `scene_count` (the scenes it read) and `excluded_count` (the
     * setting). It waits while scene recaps or merges of the chat are
     * queued; a non-terminal regeneration is returned as it is.
     * Errors as GenerateSceneRecap; FAILED_PRECONDITION also when no scene
     * has a recap.
     *
     * @generated from rpc recap.v1.RecapService.RegenerateRunningRecap
     */
    regenerateRunningRecap: {
        methodKind: "unary";
        input: typeof RegenerateRunningRecapRequestSchema;
        output: typeof JobSchema;
    };
    /**
     * Queues a message recap per message. Errors as GenerateSceneRecap.
     *
     * @generated from rpc recap.v1.RecapService.GenerateMessageRecaps
     */
    generateMessageRecaps: {
        methodKind: "unary";
        input: typeof GenerateMessageRecapsRequestSchema;
        output: typeof ListJobsResponseSchema;
    };
    /**
     * Queues the lore extraction of the scene ending at break `message_id`
     * (JOB_KIND_LORE_EXTRACT): the chat's lorebook gains or updates the
     * entries of the entities the scene establishes or changes. It waits for
     * a scene recap of that break still under way. A non-terminal extraction
     * of that scene is returned as it is. Errors as GenerateSceneRecap.
     *
     * @generated from rpc recap.v1.RecapService.GenerateLore
     */
    generateLore: {
        methodKind: "unary";
        input: typeof GenerateLoreRequestSchema;
        output: typeof JobSchema;
    };
    /**
     * The caller's jobs, newest first. Finished jobs are kept for
     * --job-retention. Errors: INVALID_ARGUMENT (a bad page token or state),
     * UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.RecapService.ListJobs
     */
    listJobs: {
        methodKind: "unary";
        input: typeof ListJobsRequestSchema;
        output: typeof ListJobsResponseSchema;
    };
    /**
     * Cancels a PENDING or RUNNING job (a running request's answer is then
     * not applied). Errors: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION
     * (the job is already terminal), ABORTED, UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.RecapService.CancelJob
     */
    cancelJob: {
        methodKind: "unary";
        input: typeof CancelJobRequestSchema;
        output: typeof JobSchema;
    };
    /**
     * Runs a FAILED or CANCELLED job again with `attempts` reset to 0 (and
     * re-queues the jobs that were cancelled because it failed). Errors as
     * CancelJob.
     *
     * @generated from rpc recap.v1.RecapService.RetryJob
     */
    retryJob: {
        methodKind: "unary";
        input: typeof RetryJobRequestSchema;
        output: typeof JobSchema;
    };
    /**
     * Every state change of the named chats' jobs, in order per job. A reader
     * more than 256 changes behind may skip intermediate states but always
     * ends at each job's latest state. Errors: INVALID_ARGUMENT,
     * RESOURCE_EXHAUSTED (--max-subscribers).
     *
     * @generated from rpc recap.v1.RecapService.WatchJobs
     */
    watchJobs: {
        methodKind: "server_streaming";
        input: typeof WatchJobsRequestSchema;
        output: typeof JobSchema;
    };
}>;
/**
 * SillyTavern World Info for a tenant: lorebooks kept as their files, and
 * the activation SillyTavern computes before a generation.
 *
 * @generated from service recap.v1.LorebookService
 */
export declare const LorebookService: GenService<{
    /**
     * Stores a World Info file under `name`, replacing a book of that name.
     * Reads what SillyTavern reads (missing fields, sparse entries, null
     * values, card-style top-level members, any language).
     * Errors: INVALID_ARGUMENT (a bad name; not JSON, not an object, or no
     * `entries` object, with the reason; an entry field of a type
     * SillyTavern does not write, named as `entries.<uid>.key[2]`),
     * RESOURCE_EXHAUSTED (past the
     * limits on books per tenant, entries per book, key or content length),
     * ABORTED (PostgreSQL: still losing to other replicas' changes of the
     * book after fresh attempts), UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.LorebookService.ImportLorebook
     */
    importLorebook: {
        methodKind: "unary";
        input: typeof ImportLorebookRequestSchema;
        output: typeof LorebookSchema;
    };
    /**
     * Stores a character card's `character_book` as a book, converted as
     * SillyTavern's "Import Card Lore" converts it. Errors as ImportLorebook,
     * plus INVALID_ARGUMENT for a card without a readable `character_book`.
     *
     * @generated from rpc recap.v1.LorebookService.ImportCharacterBook
     */
    importCharacterBook: {
        methodKind: "unary";
        input: typeof ImportCharacterBookRequestSchema;
        output: typeof LorebookSchema;
    };
    /**
     * The book as a World Info file. Errors: INVALID_ARGUMENT, NOT_FOUND,
     * UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.LorebookService.ExportLorebook
     */
    exportLorebook: {
        methodKind: "unary";
        input: typeof ExportLorebookRequestSchema;
        output: typeof ExportLorebookResponseSchema;
    };
    /**
     * The tenant's books, by name. Errors: INVALID_ARGUMENT (page size or
     * token), UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.LorebookService.ListLorebooks
     */
    listLorebooks: {
        methodKind: "unary";
        input: typeof ListLorebooksRequestSchema;
        output: typeof ListLorebooksResponseSchema;
    };
    /**
     * Deletes a book. Chats whose settings name it keep the name: the book
     * simply no longer applies. Errors: INVALID_ARGUMENT, NOT_FOUND,
     * ABORTED (as ImportLorebook), UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.LorebookService.DeleteLorebook
     */
    deleteLorebook: {
        methodKind: "unary";
        input: typeof DeleteLorebookRequestSchema;
        output: typeof DeleteLorebookResponseSchema;
    };
    /**
     * One entry. Errors: INVALID_ARGUMENT, NOT_FOUND (book or entry),
     * UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.LorebookService.GetLorebookEntry
     */
    getLorebookEntry: {
        methodKind: "unary";
        input: typeof GetLorebookEntryRequestSchema;
        output: typeof LorebookEntrySchema;
    };
    /**
     * Creates or updates one entry (see PutLorebookEntryRequest). Errors:
     * INVALID_ARGUMENT (`fields` not a JSON object, or a field of a type
     * SillyTavern does not write, named as `fields.key[0]`), NOT_FOUND (book),
     * RESOURCE_EXHAUSTED (limits), ABORTED (as ImportLorebook), UNAVAILABLE,
     * INTERNAL.
     *
     * @generated from rpc recap.v1.LorebookService.PutLorebookEntry
     */
    putLorebookEntry: {
        methodKind: "unary";
        input: typeof PutLorebookEntryRequestSchema;
        output: typeof LorebookEntrySchema;
    };
    /**
     * Deletes one entry. Errors: INVALID_ARGUMENT, NOT_FOUND (book or
     * entry), ABORTED (as ImportLorebook), UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.LorebookService.DeleteLorebookEntry
     */
    deleteLorebookEntry: {
        methodKind: "unary";
        input: typeof DeleteLorebookEntryRequestSchema;
        output: typeof LorebookSchema;
    };
    /**
     * One activation for the chat, as SillyTavern computes it before a
     * generation, with the chat's books and settings. Not a dry run: starts,
     * advances and ends the chat's sticky and cooldown effects, durably,
     * before the answer. Books its settings name that the tenant does not
     * have are skipped.
     * Errors: INVALID_ARGUMENT (bad chat id, generation type, history, extra
     * prompts or texts as in RenderPrompt), NOT_FOUND (unknown chat, or a
     * history `message_id` it does not hold), RESOURCE_EXHAUSTED (a scan
     * needing more passes than --world-info-max-passes), ABORTED
     * (PostgreSQL: committing the timed effects kept losing to other
     * replicas), UNAVAILABLE, INTERNAL.
     *
     * @generated from rpc recap.v1.LorebookService.ScanWorldInfo
     */
    scanWorldInfo: {
        methodKind: "unary";
        input: typeof ScanWorldInfoRequestSchema;
        output: typeof ScanWorldInfoResponseSchema;
    };
}>;
/**
 * Finds passages of a chat's history again: keyword relevance (BM25) and,
 * with --embedding-url, vector similarity, weighed together (keywords 0.75,
 * similarity 0.25; identical passages once). For
 * backends that assemble prompts themselves; the recall tier
 * (`auto_recap_recall`) injects the same search's best for the chat's
 * current moment.
 *
 * @generated from service recap.v1.RecallService
 */
export declare const RecallService: GenService<{
    /**
     * The passages best matching `query`, best first.
     * Errors: INVALID_ARGUMENT (bad `chat_id`; `limit` outside 0..=100;
     * `min_score` outside 0..=1; a `query` over --max-text-bytes), NOT_FOUND
     * (unknown chat), UNAVAILABLE (the embeddings endpoint did not answer
     * for a non-empty `query`: retry, or search by keyword with an empty
     * query), INTERNAL.
     *
     * @generated from rpc recap.v1.RecallService.Recall
     */
    recall: {
        methodKind: "unary";
        input: typeof RecallRequestSchema;
        output: typeof RecallResponseSchema;
    };
}>;
