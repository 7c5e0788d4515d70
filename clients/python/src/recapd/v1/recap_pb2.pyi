import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class InjectionPosition(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INJECTION_POSITION_UNSPECIFIED: _ClassVar[InjectionPosition]
    INJECTION_POSITION_NONE: _ClassVar[InjectionPosition]
    INJECTION_POSITION_IN_PROMPT: _ClassVar[InjectionPosition]
    INJECTION_POSITION_IN_CHAT: _ClassVar[InjectionPosition]
    INJECTION_POSITION_BEFORE_PROMPT: _ClassVar[InjectionPosition]

class InjectionRole(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INJECTION_ROLE_UNSPECIFIED: _ClassVar[InjectionRole]
    INJECTION_ROLE_SYSTEM: _ClassVar[InjectionRole]
    INJECTION_ROLE_USER: _ClassVar[InjectionRole]
    INJECTION_ROLE_ASSISTANT: _ClassVar[InjectionRole]

class RecapContextType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECAP_CONTEXT_TYPE_UNSPECIFIED: _ClassVar[RecapContextType]
    RECAP_CONTEXT_TYPE_PERCENT: _ClassVar[RecapContextType]
    RECAP_CONTEXT_TYPE_ABSOLUTE: _ClassVar[RecapContextType]

class StructuredOutput(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STRUCTURED_OUTPUT_UNSPECIFIED: _ClassVar[StructuredOutput]
    STRUCTURED_OUTPUT_AUTO: _ClassVar[StructuredOutput]
    STRUCTURED_OUTPUT_JSON_SCHEMA: _ClassVar[StructuredOutput]
    STRUCTURED_OUTPUT_JSON_OBJECT: _ClassVar[StructuredOutput]
    STRUCTURED_OUTPUT_OFF: _ClassVar[StructuredOutput]

class MaxTokensField(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MAX_TOKENS_FIELD_UNSPECIFIED: _ClassVar[MaxTokensField]
    MAX_TOKENS_FIELD_AUTO: _ClassVar[MaxTokensField]
    MAX_TOKENS_FIELD_MAX_TOKENS: _ClassVar[MaxTokensField]
    MAX_TOKENS_FIELD_MAX_COMPLETION_TOKENS: _ClassVar[MaxTokensField]

class Tokenizer(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOKENIZER_UNSPECIFIED: _ClassVar[Tokenizer]
    TOKENIZER_O200K_BASE: _ClassVar[Tokenizer]
    TOKENIZER_CL100K_BASE: _ClassVar[Tokenizer]
    TOKENIZER_P50K_BASE: _ClassVar[Tokenizer]
    TOKENIZER_R50K_BASE: _ClassVar[Tokenizer]
    TOKENIZER_HUGGING_FACE: _ClassVar[Tokenizer]
    TOKENIZER_LLM_ENDPOINT: _ClassVar[Tokenizer]

class WorldInfoCharacterStrategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WORLD_INFO_CHARACTER_STRATEGY_UNSPECIFIED: _ClassVar[WorldInfoCharacterStrategy]
    WORLD_INFO_CHARACTER_STRATEGY_EVENLY: _ClassVar[WorldInfoCharacterStrategy]
    WORLD_INFO_CHARACTER_STRATEGY_CHARACTER_FIRST: _ClassVar[WorldInfoCharacterStrategy]
    WORLD_INFO_CHARACTER_STRATEGY_GLOBAL_FIRST: _ClassVar[WorldInfoCharacterStrategy]

class RefreshTrigger(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REFRESH_TRIGGER_UNSPECIFIED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_CHAT_CHANGED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_MESSAGE_SENT: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_MESSAGE_RECEIVED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_MESSAGE_EDITED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_MESSAGE_DELETED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_MESSAGE_SWIPED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_MORE_MESSAGES_LOADED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_REFRESH_REQUESTED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_MESSAGE_DATA_CHANGED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_SETTINGS_CHANGED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_RUNNING_RECAP_CHANGED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_STARTUP: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_RECAP_GENERATED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_CHAT_DELETED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_RECALL_INDEXED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_TOKENS_COUNTED: _ClassVar[RefreshTrigger]
    REFRESH_TRIGGER_RECALL_SEARCHED: _ClassVar[RefreshTrigger]

class PromptMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROMPT_MODE_UNSPECIFIED: _ClassVar[PromptMode]
    PROMPT_MODE_TEXT_COMPLETION: _ClassVar[PromptMode]
    PROMPT_MODE_CHAT_COMPLETION: _ClassVar[PromptMode]

class JobKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_KIND_UNSPECIFIED: _ClassVar[JobKind]
    JOB_KIND_DETECT_SCENE_BREAK: _ClassVar[JobKind]
    JOB_KIND_SCENE_RECAP: _ClassVar[JobKind]
    JOB_KIND_RUNNING_RECAP: _ClassVar[JobKind]
    JOB_KIND_MESSAGE_RECAP: _ClassVar[JobKind]
    JOB_KIND_LORE_EXTRACT: _ClassVar[JobKind]
    JOB_KIND_LORE_RESOLVE: _ClassVar[JobKind]
    JOB_KIND_LORE_MERGE: _ClassVar[JobKind]
    JOB_KIND_LORE_COMPACT: _ClassVar[JobKind]
    JOB_KIND_INDEX: _ClassVar[JobKind]
    JOB_KIND_REGENERATE_RUNNING_RECAP: _ClassVar[JobKind]

class JobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_STATE_UNSPECIFIED: _ClassVar[JobState]
    JOB_STATE_PENDING: _ClassVar[JobState]
    JOB_STATE_RUNNING: _ClassVar[JobState]
    JOB_STATE_SUCCEEDED: _ClassVar[JobState]
    JOB_STATE_FAILED: _ClassVar[JobState]
    JOB_STATE_CANCELLED: _ClassVar[JobState]
    JOB_STATE_DISCARDED: _ClassVar[JobState]
INJECTION_POSITION_UNSPECIFIED: InjectionPosition
INJECTION_POSITION_NONE: InjectionPosition
INJECTION_POSITION_IN_PROMPT: InjectionPosition
INJECTION_POSITION_IN_CHAT: InjectionPosition
INJECTION_POSITION_BEFORE_PROMPT: InjectionPosition
INJECTION_ROLE_UNSPECIFIED: InjectionRole
INJECTION_ROLE_SYSTEM: InjectionRole
INJECTION_ROLE_USER: InjectionRole
INJECTION_ROLE_ASSISTANT: InjectionRole
RECAP_CONTEXT_TYPE_UNSPECIFIED: RecapContextType
RECAP_CONTEXT_TYPE_PERCENT: RecapContextType
RECAP_CONTEXT_TYPE_ABSOLUTE: RecapContextType
STRUCTURED_OUTPUT_UNSPECIFIED: StructuredOutput
STRUCTURED_OUTPUT_AUTO: StructuredOutput
STRUCTURED_OUTPUT_JSON_SCHEMA: StructuredOutput
STRUCTURED_OUTPUT_JSON_OBJECT: StructuredOutput
STRUCTURED_OUTPUT_OFF: StructuredOutput
MAX_TOKENS_FIELD_UNSPECIFIED: MaxTokensField
MAX_TOKENS_FIELD_AUTO: MaxTokensField
MAX_TOKENS_FIELD_MAX_TOKENS: MaxTokensField
MAX_TOKENS_FIELD_MAX_COMPLETION_TOKENS: MaxTokensField
TOKENIZER_UNSPECIFIED: Tokenizer
TOKENIZER_O200K_BASE: Tokenizer
TOKENIZER_CL100K_BASE: Tokenizer
TOKENIZER_P50K_BASE: Tokenizer
TOKENIZER_R50K_BASE: Tokenizer
TOKENIZER_HUGGING_FACE: Tokenizer
TOKENIZER_LLM_ENDPOINT: Tokenizer
WORLD_INFO_CHARACTER_STRATEGY_UNSPECIFIED: WorldInfoCharacterStrategy
WORLD_INFO_CHARACTER_STRATEGY_EVENLY: WorldInfoCharacterStrategy
WORLD_INFO_CHARACTER_STRATEGY_CHARACTER_FIRST: WorldInfoCharacterStrategy
WORLD_INFO_CHARACTER_STRATEGY_GLOBAL_FIRST: WorldInfoCharacterStrategy
REFRESH_TRIGGER_UNSPECIFIED: RefreshTrigger
REFRESH_TRIGGER_CHAT_CHANGED: RefreshTrigger
REFRESH_TRIGGER_MESSAGE_SENT: RefreshTrigger
REFRESH_TRIGGER_MESSAGE_RECEIVED: RefreshTrigger
REFRESH_TRIGGER_MESSAGE_EDITED: RefreshTrigger
REFRESH_TRIGGER_MESSAGE_DELETED: RefreshTrigger
REFRESH_TRIGGER_MESSAGE_SWIPED: RefreshTrigger
REFRESH_TRIGGER_MORE_MESSAGES_LOADED: RefreshTrigger
REFRESH_TRIGGER_REFRESH_REQUESTED: RefreshTrigger
REFRESH_TRIGGER_MESSAGE_DATA_CHANGED: RefreshTrigger
REFRESH_TRIGGER_SETTINGS_CHANGED: RefreshTrigger
REFRESH_TRIGGER_RUNNING_RECAP_CHANGED: RefreshTrigger
REFRESH_TRIGGER_STARTUP: RefreshTrigger
REFRESH_TRIGGER_RECAP_GENERATED: RefreshTrigger
REFRESH_TRIGGER_CHAT_DELETED: RefreshTrigger
REFRESH_TRIGGER_RECALL_INDEXED: RefreshTrigger
REFRESH_TRIGGER_TOKENS_COUNTED: RefreshTrigger
REFRESH_TRIGGER_RECALL_SEARCHED: RefreshTrigger
PROMPT_MODE_UNSPECIFIED: PromptMode
PROMPT_MODE_TEXT_COMPLETION: PromptMode
PROMPT_MODE_CHAT_COMPLETION: PromptMode
JOB_KIND_UNSPECIFIED: JobKind
JOB_KIND_DETECT_SCENE_BREAK: JobKind
JOB_KIND_SCENE_RECAP: JobKind
JOB_KIND_RUNNING_RECAP: JobKind
JOB_KIND_MESSAGE_RECAP: JobKind
JOB_KIND_LORE_EXTRACT: JobKind
JOB_KIND_LORE_RESOLVE: JobKind
JOB_KIND_LORE_MERGE: JobKind
JOB_KIND_LORE_COMPACT: JobKind
JOB_KIND_INDEX: JobKind
JOB_KIND_REGENERATE_RUNNING_RECAP: JobKind
JOB_STATE_UNSPECIFIED: JobState
JOB_STATE_PENDING: JobState
JOB_STATE_RUNNING: JobState
JOB_STATE_SUCCEEDED: JobState
JOB_STATE_FAILED: JobState
JOB_STATE_CANCELLED: JobState
JOB_STATE_DISCARDED: JobState

class Message(_message.Message):
    __slots__ = ("id", "name", "text", "is_user", "hidden", "is_narrator", "is_thoughts", "character_key", "swipes", "swipe_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    IS_USER_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_FIELD_NUMBER: _ClassVar[int]
    IS_NARRATOR_FIELD_NUMBER: _ClassVar[int]
    IS_THOUGHTS_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_KEY_FIELD_NUMBER: _ClassVar[int]
    SWIPES_FIELD_NUMBER: _ClassVar[int]
    SWIPE_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    text: str
    is_user: bool
    hidden: bool
    is_narrator: bool
    is_thoughts: bool
    character_key: str
    swipes: _containers.RepeatedScalarFieldContainer[str]
    swipe_id: int
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., text: _Optional[str] = ..., is_user: _Optional[bool] = ..., hidden: _Optional[bool] = ..., is_narrator: _Optional[bool] = ..., is_thoughts: _Optional[bool] = ..., character_key: _Optional[str] = ..., swipes: _Optional[_Iterable[str]] = ..., swipe_id: _Optional[int] = ...) -> None: ...

class ChatChanged(_message.Message):
    __slots__ = ("messages", "character_key", "group_id")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_KEY_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    character_key: str
    group_id: str
    def __init__(self, messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., character_key: _Optional[str] = ..., group_id: _Optional[str] = ...) -> None: ...

class MessageSent(_message.Message):
    __slots__ = ("message",)
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: Message
    def __init__(self, message: _Optional[_Union[Message, _Mapping]] = ...) -> None: ...

class MessageReceived(_message.Message):
    __slots__ = ("message",)
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: Message
    def __init__(self, message: _Optional[_Union[Message, _Mapping]] = ...) -> None: ...

class MessageEdited(_message.Message):
    __slots__ = ("message_id", "text")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    text: str
    def __init__(self, message_id: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class MessageDeleted(_message.Message):
    __slots__ = ("message_id",)
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    def __init__(self, message_id: _Optional[str] = ...) -> None: ...

class MessageSwiped(_message.Message):
    __slots__ = ("message_id", "swipe_id", "text")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    SWIPE_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    swipe_id: int
    text: str
    def __init__(self, message_id: _Optional[str] = ..., swipe_id: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class MoreMessagesLoaded(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    def __init__(self, messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ...) -> None: ...

class RefreshRequested(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Event(_message.Message):
    __slots__ = ("chat_id", "chat_changed", "message_sent", "message_received", "message_edited", "message_deleted", "message_swiped", "more_messages_loaded", "refresh_requested")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    CHAT_CHANGED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_SENT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_EDITED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_DELETED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_SWIPED_FIELD_NUMBER: _ClassVar[int]
    MORE_MESSAGES_LOADED_FIELD_NUMBER: _ClassVar[int]
    REFRESH_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    chat_changed: ChatChanged
    message_sent: MessageSent
    message_received: MessageReceived
    message_edited: MessageEdited
    message_deleted: MessageDeleted
    message_swiped: MessageSwiped
    more_messages_loaded: MoreMessagesLoaded
    refresh_requested: RefreshRequested
    def __init__(self, chat_id: _Optional[str] = ..., chat_changed: _Optional[_Union[ChatChanged, _Mapping]] = ..., message_sent: _Optional[_Union[MessageSent, _Mapping]] = ..., message_received: _Optional[_Union[MessageReceived, _Mapping]] = ..., message_edited: _Optional[_Union[MessageEdited, _Mapping]] = ..., message_deleted: _Optional[_Union[MessageDeleted, _Mapping]] = ..., message_swiped: _Optional[_Union[MessageSwiped, _Mapping]] = ..., more_messages_loaded: _Optional[_Union[MoreMessagesLoaded, _Mapping]] = ..., refresh_requested: _Optional[_Union[RefreshRequested, _Mapping]] = ...) -> None: ...

class PublishRequest(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: Event
    def __init__(self, event: _Optional[_Union[Event, _Mapping]] = ...) -> None: ...

class PublishResponse(_message.Message):
    __slots__ = ("revision",)
    REVISION_FIELD_NUMBER: _ClassVar[int]
    revision: int
    def __init__(self, revision: _Optional[int] = ...) -> None: ...

class MessageData(_message.Message):
    __slots__ = ("memory", "prefill", "exclude", "error", "reasoning", "edited", "scene_break", "scene_break_visible", "scene_break_name", "scene_recap_memory", "is_auto_recap_system_memory", "scene_recap_versions", "scene_recap_current_index")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    PREFILL_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    EDITED_FIELD_NUMBER: _ClassVar[int]
    SCENE_BREAK_FIELD_NUMBER: _ClassVar[int]
    SCENE_BREAK_VISIBLE_FIELD_NUMBER: _ClassVar[int]
    SCENE_BREAK_NAME_FIELD_NUMBER: _ClassVar[int]
    SCENE_RECAP_MEMORY_FIELD_NUMBER: _ClassVar[int]
    IS_AUTO_RECAP_SYSTEM_MEMORY_FIELD_NUMBER: _ClassVar[int]
    SCENE_RECAP_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    SCENE_RECAP_CURRENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    memory: str
    prefill: str
    exclude: bool
    error: str
    reasoning: str
    edited: bool
    scene_break: bool
    scene_break_visible: bool
    scene_break_name: str
    scene_recap_memory: str
    is_auto_recap_system_memory: bool
    scene_recap_versions: _containers.RepeatedScalarFieldContainer[str]
    scene_recap_current_index: int
    def __init__(self, memory: _Optional[str] = ..., prefill: _Optional[str] = ..., exclude: _Optional[bool] = ..., error: _Optional[str] = ..., reasoning: _Optional[str] = ..., edited: _Optional[bool] = ..., scene_break: _Optional[bool] = ..., scene_break_visible: _Optional[bool] = ..., scene_break_name: _Optional[str] = ..., scene_recap_memory: _Optional[str] = ..., is_auto_recap_system_memory: _Optional[bool] = ..., scene_recap_versions: _Optional[_Iterable[str]] = ..., scene_recap_current_index: _Optional[int] = ...) -> None: ...

class SetMessageDataRequest(_message.Message):
    __slots__ = ("chat_id", "message_id", "data", "edit")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    EDIT_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    message_id: str
    data: MessageData
    edit: bool
    def __init__(self, chat_id: _Optional[str] = ..., message_id: _Optional[str] = ..., data: _Optional[_Union[MessageData, _Mapping]] = ..., edit: _Optional[bool] = ...) -> None: ...

class GetMessageDataRequest(_message.Message):
    __slots__ = ("chat_id", "message_id", "swipe_id")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    SWIPE_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    message_id: str
    swipe_id: int
    def __init__(self, chat_id: _Optional[str] = ..., message_id: _Optional[str] = ..., swipe_id: _Optional[int] = ...) -> None: ...

class SelectSceneRecapVersionRequest(_message.Message):
    __slots__ = ("chat_id", "message_id", "index")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    message_id: str
    index: int
    def __init__(self, chat_id: _Optional[str] = ..., message_id: _Optional[str] = ..., index: _Optional[int] = ...) -> None: ...

class ClearMemoryRequest(_message.Message):
    __slots__ = ("chat_id", "message_id")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    message_id: str
    def __init__(self, chat_id: _Optional[str] = ..., message_id: _Optional[str] = ...) -> None: ...

class RunningRecapVersion(_message.Message):
    __slots__ = ("version", "created_at", "content", "scene_count", "excluded_count", "prev_scene_message_id", "new_scene_message_id", "carried_from_chat_id")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SCENE_COUNT_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_COUNT_FIELD_NUMBER: _ClassVar[int]
    PREV_SCENE_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    NEW_SCENE_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CARRIED_FROM_CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    version: int
    created_at: _timestamp_pb2.Timestamp
    content: str
    scene_count: int
    excluded_count: int
    prev_scene_message_id: str
    new_scene_message_id: str
    carried_from_chat_id: str
    def __init__(self, version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., content: _Optional[str] = ..., scene_count: _Optional[int] = ..., excluded_count: _Optional[int] = ..., prev_scene_message_id: _Optional[str] = ..., new_scene_message_id: _Optional[str] = ..., carried_from_chat_id: _Optional[str] = ...) -> None: ...

class AddRunningRecapRequest(_message.Message):
    __slots__ = ("chat_id", "content", "scene_count", "excluded_count", "prev_scene_message_id", "new_scene_message_id")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SCENE_COUNT_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_COUNT_FIELD_NUMBER: _ClassVar[int]
    PREV_SCENE_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    NEW_SCENE_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    content: str
    scene_count: int
    excluded_count: int
    prev_scene_message_id: str
    new_scene_message_id: str
    def __init__(self, chat_id: _Optional[str] = ..., content: _Optional[str] = ..., scene_count: _Optional[int] = ..., excluded_count: _Optional[int] = ..., prev_scene_message_id: _Optional[str] = ..., new_scene_message_id: _Optional[str] = ...) -> None: ...

class SelectRunningRecapRequest(_message.Message):
    __slots__ = ("chat_id", "version")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    version: int
    def __init__(self, chat_id: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class DeleteRunningRecapRequest(_message.Message):
    __slots__ = ("chat_id", "version")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    version: int
    def __init__(self, chat_id: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class ListRunningRecapsRequest(_message.Message):
    __slots__ = ("chat_id",)
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    def __init__(self, chat_id: _Optional[str] = ...) -> None: ...

class ListRunningRecapsResponse(_message.Message):
    __slots__ = ("current_version", "versions")
    CURRENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    current_version: int
    versions: _containers.RepeatedCompositeFieldContainer[RunningRecapVersion]
    def __init__(self, current_version: _Optional[int] = ..., versions: _Optional[_Iterable[_Union[RunningRecapVersion, _Mapping]]] = ...) -> None: ...

class StartChatFromRequest(_message.Message):
    __slots__ = ("from_chat_id", "new_chat_id")
    FROM_CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    NEW_CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    from_chat_id: str
    new_chat_id: str
    def __init__(self, from_chat_id: _Optional[str] = ..., new_chat_id: _Optional[str] = ...) -> None: ...

class StartChatFromResponse(_message.Message):
    __slots__ = ("chat_id", "carried_recap", "chat_book", "recall_chats")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    CARRIED_RECAP_FIELD_NUMBER: _ClassVar[int]
    CHAT_BOOK_FIELD_NUMBER: _ClassVar[int]
    RECALL_CHATS_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    carried_recap: bool
    chat_book: str
    recall_chats: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, chat_id: _Optional[str] = ..., carried_recap: _Optional[bool] = ..., chat_book: _Optional[str] = ..., recall_chats: _Optional[_Iterable[str]] = ...) -> None: ...

class BranchChatRequest(_message.Message):
    __slots__ = ("chat_id", "message_id", "new_chat_id")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    NEW_CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    message_id: str
    new_chat_id: str
    def __init__(self, chat_id: _Optional[str] = ..., message_id: _Optional[str] = ..., new_chat_id: _Optional[str] = ...) -> None: ...

class BranchChatResponse(_message.Message):
    __slots__ = ("chat_id", "message_count", "running_recap_count", "chat_book")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    RUNNING_RECAP_COUNT_FIELD_NUMBER: _ClassVar[int]
    CHAT_BOOK_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    message_count: int
    running_recap_count: int
    chat_book: str
    def __init__(self, chat_id: _Optional[str] = ..., message_count: _Optional[int] = ..., running_recap_count: _Optional[int] = ..., chat_book: _Optional[str] = ...) -> None: ...

class DeleteChatRequest(_message.Message):
    __slots__ = ("chat_id",)
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    def __init__(self, chat_id: _Optional[str] = ...) -> None: ...

class DeleteChatResponse(_message.Message):
    __slots__ = ("revision",)
    REVISION_FIELD_NUMBER: _ClassVar[int]
    revision: int
    def __init__(self, revision: _Optional[int] = ...) -> None: ...

class ListChatsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListChatsResponse(_message.Message):
    __slots__ = ("chats", "next_page_token")
    CHATS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    chats: _containers.RepeatedCompositeFieldContainer[ChatSummary]
    next_page_token: str
    def __init__(self, chats: _Optional[_Iterable[_Union[ChatSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ChatSummary(_message.Message):
    __slots__ = ("chat_id", "message_count", "revision", "enabled", "updated_at", "character_key", "group_id", "parent_chat_id", "parent_message_id")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_KEY_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    message_count: int
    revision: int
    enabled: bool
    updated_at: _timestamp_pb2.Timestamp
    character_key: str
    group_id: str
    parent_chat_id: str
    parent_message_id: str
    def __init__(self, chat_id: _Optional[str] = ..., message_count: _Optional[int] = ..., revision: _Optional[int] = ..., enabled: _Optional[bool] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., character_key: _Optional[str] = ..., group_id: _Optional[str] = ..., parent_chat_id: _Optional[str] = ..., parent_message_id: _Optional[str] = ...) -> None: ...

class ImportChatStreamRequest(_message.Message):
    __slots__ = ("chat_id", "chunk", "group_id", "branch_from_main_chat")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FROM_MAIN_CHAT_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    chunk: bytes
    group_id: str
    branch_from_main_chat: bool
    def __init__(self, chat_id: _Optional[str] = ..., chunk: _Optional[bytes] = ..., group_id: _Optional[str] = ..., branch_from_main_chat: _Optional[bool] = ...) -> None: ...

class ExportChatStreamRequest(_message.Message):
    __slots__ = ("chat_id",)
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    def __init__(self, chat_id: _Optional[str] = ...) -> None: ...

class ExportChatStreamResponse(_message.Message):
    __slots__ = ("chunk",)
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    chunk: bytes
    def __init__(self, chunk: _Optional[bytes] = ...) -> None: ...

class ImportChatRequest(_message.Message):
    __slots__ = ("chat_id", "jsonl", "group_id", "branch_from_main_chat")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    JSONL_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FROM_MAIN_CHAT_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    jsonl: bytes
    group_id: str
    branch_from_main_chat: bool
    def __init__(self, chat_id: _Optional[str] = ..., jsonl: _Optional[bytes] = ..., group_id: _Optional[str] = ..., branch_from_main_chat: _Optional[bool] = ...) -> None: ...

class ImportChatResponse(_message.Message):
    __slots__ = ("chat_id", "message_count", "running_recap_count", "warnings", "branched_from_chat_id", "not_branched_reason")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    RUNNING_RECAP_COUNT_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    BRANCHED_FROM_CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    NOT_BRANCHED_REASON_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    message_count: int
    running_recap_count: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    branched_from_chat_id: str
    not_branched_reason: str
    def __init__(self, chat_id: _Optional[str] = ..., message_count: _Optional[int] = ..., running_recap_count: _Optional[int] = ..., warnings: _Optional[_Iterable[str]] = ..., branched_from_chat_id: _Optional[str] = ..., not_branched_reason: _Optional[str] = ...) -> None: ...

class ExportChatRequest(_message.Message):
    __slots__ = ("chat_id",)
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    def __init__(self, chat_id: _Optional[str] = ...) -> None: ...

class ExportChatResponse(_message.Message):
    __slots__ = ("jsonl",)
    JSONL_FIELD_NUMBER: _ClassVar[int]
    jsonl: bytes
    def __init__(self, jsonl: _Optional[bytes] = ...) -> None: ...

class CharacterKeys(_message.Message):
    __slots__ = ("keys",)
    KEYS_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, keys: _Optional[_Iterable[str]] = ...) -> None: ...

class StringList(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, values: _Optional[_Iterable[str]] = ...) -> None: ...

class Settings(_message.Message):
    __slots__ = ("position", "depth", "role", "scan", "template", "include_user_messages", "include_system_messages", "include_narrator_messages", "message_length_threshold", "message_recap_context_limit", "message_recap_context_type", "max_context_tokens", "tokenizer", "auto_hide_scene_count", "show_prefill", "default_chat_enabled", "use_global_toggle_state", "global_toggle_state", "disabled_character_keys", "debounce_ms", "message_recaps_enabled", "message_recaps_position", "message_recaps_depth", "message_recaps_role", "message_recaps_scan", "message_recaps_template", "auto_scene_break_detection", "scene_break_offset", "scene_break_min_messages", "auto_scene_recap", "auto_running_recap", "auto_message_recaps", "message_recap_lag", "scene_break_prompt", "scene_recap_prompt", "running_recap_prompt", "message_recap_prompt", "llm_model", "llm_max_tokens", "llm_temperature", "llm_structured_output", "llm_max_tokens_field", "running_recap_min_ratio", "running_recap_exclude_latest", "world_info_depth", "world_info_min_activations", "world_info_min_activations_depth_max", "world_info_budget", "world_info_budget_cap", "world_info_include_names", "world_info_recursive", "world_info_case_sensitive", "world_info_match_whole_words", "world_info_use_group_scoring", "world_info_character_strategy", "world_info_max_recursion_steps", "world_info_global_books", "world_info_character_books", "world_info_chat_book", "world_info_persona_book", "auto_lore", "lore_extract_prompt", "lore_resolve_prompt", "lore_merge_prompt", "lore_compact_prompt", "lore_entity_types", "lore_book_name_template", "lore_compaction_threshold", "lore_max_entries", "lore_max_keys", "lore_seed_from_active_books", "lore_delete_book_with_chat", "recall_enabled", "recall_query_messages", "recall_exclude_recent", "recall_max_tokens", "recall_min_score", "recall_template", "recall_position", "recall_depth", "recall_role", "recall_scan", "recall_chunk_chars", "recall_min_similarity", "recall_chats", "tokenizer_name", "profile")
    POSITION_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SCAN_FIELD_NUMBER: _ClassVar[int]
    TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_USER_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SYSTEM_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_NARRATOR_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_LENGTH_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_RECAP_CONTEXT_LIMIT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_RECAP_CONTEXT_TYPE_FIELD_NUMBER: _ClassVar[int]
    MAX_CONTEXT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOKENIZER_FIELD_NUMBER: _ClassVar[int]
    AUTO_HIDE_SCENE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SHOW_PREFILL_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_CHAT_ENABLED_FIELD_NUMBER: _ClassVar[int]
    USE_GLOBAL_TOGGLE_STATE_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_TOGGLE_STATE_FIELD_NUMBER: _ClassVar[int]
    DISABLED_CHARACTER_KEYS_FIELD_NUMBER: _ClassVar[int]
    DEBOUNCE_MS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_RECAPS_ENABLED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_RECAPS_POSITION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_RECAPS_DEPTH_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_RECAPS_ROLE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_RECAPS_SCAN_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_RECAPS_TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    AUTO_SCENE_BREAK_DETECTION_FIELD_NUMBER: _ClassVar[int]
    SCENE_BREAK_OFFSET_FIELD_NUMBER: _ClassVar[int]
    SCENE_BREAK_MIN_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    AUTO_SCENE_RECAP_FIELD_NUMBER: _ClassVar[int]
    AUTO_RUNNING_RECAP_FIELD_NUMBER: _ClassVar[int]
    AUTO_MESSAGE_RECAPS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_RECAP_LAG_FIELD_NUMBER: _ClassVar[int]
    SCENE_BREAK_PROMPT_FIELD_NUMBER: _ClassVar[int]
    SCENE_RECAP_PROMPT_FIELD_NUMBER: _ClassVar[int]
    RUNNING_RECAP_PROMPT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_RECAP_PROMPT_FIELD_NUMBER: _ClassVar[int]
    LLM_MODEL_FIELD_NUMBER: _ClassVar[int]
    LLM_MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    LLM_TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    LLM_STRUCTURED_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    LLM_MAX_TOKENS_FIELD_FIELD_NUMBER: _ClassVar[int]
    RUNNING_RECAP_MIN_RATIO_FIELD_NUMBER: _ClassVar[int]
    RUNNING_RECAP_EXCLUDE_LATEST_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_DEPTH_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_MIN_ACTIVATIONS_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_MIN_ACTIVATIONS_DEPTH_MAX_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_BUDGET_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_BUDGET_CAP_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_INCLUDE_NAMES_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_CASE_SENSITIVE_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_MATCH_WHOLE_WORDS_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_USE_GROUP_SCORING_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_CHARACTER_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_MAX_RECURSION_STEPS_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_GLOBAL_BOOKS_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_CHARACTER_BOOKS_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_CHAT_BOOK_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_PERSONA_BOOK_FIELD_NUMBER: _ClassVar[int]
    AUTO_LORE_FIELD_NUMBER: _ClassVar[int]
    LORE_EXTRACT_PROMPT_FIELD_NUMBER: _ClassVar[int]
    LORE_RESOLVE_PROMPT_FIELD_NUMBER: _ClassVar[int]
    LORE_MERGE_PROMPT_FIELD_NUMBER: _ClassVar[int]
    LORE_COMPACT_PROMPT_FIELD_NUMBER: _ClassVar[int]
    LORE_ENTITY_TYPES_FIELD_NUMBER: _ClassVar[int]
    LORE_BOOK_NAME_TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    LORE_COMPACTION_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    LORE_MAX_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    LORE_MAX_KEYS_FIELD_NUMBER: _ClassVar[int]
    LORE_SEED_FROM_ACTIVE_BOOKS_FIELD_NUMBER: _ClassVar[int]
    LORE_DELETE_BOOK_WITH_CHAT_FIELD_NUMBER: _ClassVar[int]
    RECALL_ENABLED_FIELD_NUMBER: _ClassVar[int]
    RECALL_QUERY_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    RECALL_EXCLUDE_RECENT_FIELD_NUMBER: _ClassVar[int]
    RECALL_MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    RECALL_MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    RECALL_TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    RECALL_POSITION_FIELD_NUMBER: _ClassVar[int]
    RECALL_DEPTH_FIELD_NUMBER: _ClassVar[int]
    RECALL_ROLE_FIELD_NUMBER: _ClassVar[int]
    RECALL_SCAN_FIELD_NUMBER: _ClassVar[int]
    RECALL_CHUNK_CHARS_FIELD_NUMBER: _ClassVar[int]
    RECALL_MIN_SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    RECALL_CHATS_FIELD_NUMBER: _ClassVar[int]
    TOKENIZER_NAME_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    position: InjectionPosition
    depth: int
    role: InjectionRole
    scan: bool
    template: str
    include_user_messages: bool
    include_system_messages: bool
    include_narrator_messages: bool
    message_length_threshold: int
    message_recap_context_limit: int
    message_recap_context_type: RecapContextType
    max_context_tokens: int
    tokenizer: Tokenizer
    auto_hide_scene_count: int
    show_prefill: bool
    default_chat_enabled: bool
    use_global_toggle_state: bool
    global_toggle_state: bool
    disabled_character_keys: CharacterKeys
    debounce_ms: int
    message_recaps_enabled: bool
    message_recaps_position: InjectionPosition
    message_recaps_depth: int
    message_recaps_role: InjectionRole
    message_recaps_scan: bool
    message_recaps_template: str
    auto_scene_break_detection: bool
    scene_break_offset: int
    scene_break_min_messages: int
    auto_scene_recap: bool
    auto_running_recap: bool
    auto_message_recaps: bool
    message_recap_lag: int
    scene_break_prompt: str
    scene_recap_prompt: str
    running_recap_prompt: str
    message_recap_prompt: str
    llm_model: str
    llm_max_tokens: int
    llm_temperature: float
    llm_structured_output: StructuredOutput
    llm_max_tokens_field: MaxTokensField
    running_recap_min_ratio: float
    running_recap_exclude_latest: int
    world_info_depth: int
    world_info_min_activations: int
    world_info_min_activations_depth_max: int
    world_info_budget: int
    world_info_budget_cap: int
    world_info_include_names: bool
    world_info_recursive: bool
    world_info_case_sensitive: bool
    world_info_match_whole_words: bool
    world_info_use_group_scoring: bool
    world_info_character_strategy: WorldInfoCharacterStrategy
    world_info_max_recursion_steps: int
    world_info_global_books: StringList
    world_info_character_books: StringList
    world_info_chat_book: str
    world_info_persona_book: str
    auto_lore: bool
    lore_extract_prompt: str
    lore_resolve_prompt: str
    lore_merge_prompt: str
    lore_compact_prompt: str
    lore_entity_types: StringList
    lore_book_name_template: str
    lore_compaction_threshold: int
    lore_max_entries: int
    lore_max_keys: int
    lore_seed_from_active_books: bool
    lore_delete_book_with_chat: bool
    recall_enabled: bool
    recall_query_messages: int
    recall_exclude_recent: int
    recall_max_tokens: int
    recall_min_score: float
    recall_template: str
    recall_position: InjectionPosition
    recall_depth: int
    recall_role: InjectionRole
    recall_scan: bool
    recall_chunk_chars: int
    recall_min_similarity: float
    recall_chats: StringList
    tokenizer_name: str
    profile: str
    def __init__(self, position: _Optional[_Union[InjectionPosition, str]] = ..., depth: _Optional[int] = ..., role: _Optional[_Union[InjectionRole, str]] = ..., scan: _Optional[bool] = ..., template: _Optional[str] = ..., include_user_messages: _Optional[bool] = ..., include_system_messages: _Optional[bool] = ..., include_narrator_messages: _Optional[bool] = ..., message_length_threshold: _Optional[int] = ..., message_recap_context_limit: _Optional[int] = ..., message_recap_context_type: _Optional[_Union[RecapContextType, str]] = ..., max_context_tokens: _Optional[int] = ..., tokenizer: _Optional[_Union[Tokenizer, str]] = ..., auto_hide_scene_count: _Optional[int] = ..., show_prefill: _Optional[bool] = ..., default_chat_enabled: _Optional[bool] = ..., use_global_toggle_state: _Optional[bool] = ..., global_toggle_state: _Optional[bool] = ..., disabled_character_keys: _Optional[_Union[CharacterKeys, _Mapping]] = ..., debounce_ms: _Optional[int] = ..., message_recaps_enabled: _Optional[bool] = ..., message_recaps_position: _Optional[_Union[InjectionPosition, str]] = ..., message_recaps_depth: _Optional[int] = ..., message_recaps_role: _Optional[_Union[InjectionRole, str]] = ..., message_recaps_scan: _Optional[bool] = ..., message_recaps_template: _Optional[str] = ..., auto_scene_break_detection: _Optional[bool] = ..., scene_break_offset: _Optional[int] = ..., scene_break_min_messages: _Optional[int] = ..., auto_scene_recap: _Optional[bool] = ..., auto_running_recap: _Optional[bool] = ..., auto_message_recaps: _Optional[bool] = ..., message_recap_lag: _Optional[int] = ..., scene_break_prompt: _Optional[str] = ..., scene_recap_prompt: _Optional[str] = ..., running_recap_prompt: _Optional[str] = ..., message_recap_prompt: _Optional[str] = ..., llm_model: _Optional[str] = ..., llm_max_tokens: _Optional[int] = ..., llm_temperature: _Optional[float] = ..., llm_structured_output: _Optional[_Union[StructuredOutput, str]] = ..., llm_max_tokens_field: _Optional[_Union[MaxTokensField, str]] = ..., running_recap_min_ratio: _Optional[float] = ..., running_recap_exclude_latest: _Optional[int] = ..., world_info_depth: _Optional[int] = ..., world_info_min_activations: _Optional[int] = ..., world_info_min_activations_depth_max: _Optional[int] = ..., world_info_budget: _Optional[int] = ..., world_info_budget_cap: _Optional[int] = ..., world_info_include_names: _Optional[bool] = ..., world_info_recursive: _Optional[bool] = ..., world_info_case_sensitive: _Optional[bool] = ..., world_info_match_whole_words: _Optional[bool] = ..., world_info_use_group_scoring: _Optional[bool] = ..., world_info_character_strategy: _Optional[_Union[WorldInfoCharacterStrategy, str]] = ..., world_info_max_recursion_steps: _Optional[int] = ..., world_info_global_books: _Optional[_Union[StringList, _Mapping]] = ..., world_info_character_books: _Optional[_Union[StringList, _Mapping]] = ..., world_info_chat_book: _Optional[str] = ..., world_info_persona_book: _Optional[str] = ..., auto_lore: _Optional[bool] = ..., lore_extract_prompt: _Optional[str] = ..., lore_resolve_prompt: _Optional[str] = ..., lore_merge_prompt: _Optional[str] = ..., lore_compact_prompt: _Optional[str] = ..., lore_entity_types: _Optional[_Union[StringList, _Mapping]] = ..., lore_book_name_template: _Optional[str] = ..., lore_compaction_threshold: _Optional[int] = ..., lore_max_entries: _Optional[int] = ..., lore_max_keys: _Optional[int] = ..., lore_seed_from_active_books: _Optional[bool] = ..., lore_delete_book_with_chat: _Optional[bool] = ..., recall_enabled: _Optional[bool] = ..., recall_query_messages: _Optional[int] = ..., recall_exclude_recent: _Optional[int] = ..., recall_max_tokens: _Optional[int] = ..., recall_min_score: _Optional[float] = ..., recall_template: _Optional[str] = ..., recall_position: _Optional[_Union[InjectionPosition, str]] = ..., recall_depth: _Optional[int] = ..., recall_role: _Optional[_Union[InjectionRole, str]] = ..., recall_scan: _Optional[bool] = ..., recall_chunk_chars: _Optional[int] = ..., recall_min_similarity: _Optional[float] = ..., recall_chats: _Optional[_Union[StringList, _Mapping]] = ..., tokenizer_name: _Optional[str] = ..., profile: _Optional[str] = ...) -> None: ...

class GetSettingsRequest(_message.Message):
    __slots__ = ("chat_id",)
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    def __init__(self, chat_id: _Optional[str] = ...) -> None: ...

class UpdateSettingsRequest(_message.Message):
    __slots__ = ("chat_id", "settings", "clear")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    CLEAR_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    settings: Settings
    clear: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, chat_id: _Optional[str] = ..., settings: _Optional[_Union[Settings, _Mapping]] = ..., clear: _Optional[_Iterable[str]] = ...) -> None: ...

class ImportSettingsRequest(_message.Message):
    __slots__ = ("chat_id", "json")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    json: str
    def __init__(self, chat_id: _Optional[str] = ..., json: _Optional[str] = ...) -> None: ...

class ImportSettingsResponse(_message.Message):
    __slots__ = ("settings", "ignored_keys")
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    IGNORED_KEYS_FIELD_NUMBER: _ClassVar[int]
    settings: Settings
    ignored_keys: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, settings: _Optional[_Union[Settings, _Mapping]] = ..., ignored_keys: _Optional[_Iterable[str]] = ...) -> None: ...

class SetChatEnabledRequest(_message.Message):
    __slots__ = ("chat_id", "enabled")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    enabled: bool
    def __init__(self, chat_id: _Optional[str] = ..., enabled: _Optional[bool] = ...) -> None: ...

class SetChatEnabledResponse(_message.Message):
    __slots__ = ("enabled", "revision")
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    enabled: bool
    revision: int
    def __init__(self, enabled: _Optional[bool] = ..., revision: _Optional[int] = ...) -> None: ...

class Profile(_message.Message):
    __slots__ = ("name", "settings")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    name: str
    settings: Settings
    def __init__(self, name: _Optional[str] = ..., settings: _Optional[_Union[Settings, _Mapping]] = ...) -> None: ...

class PutProfileRequest(_message.Message):
    __slots__ = ("name", "settings")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    name: str
    settings: Settings
    def __init__(self, name: _Optional[str] = ..., settings: _Optional[_Union[Settings, _Mapping]] = ...) -> None: ...

class GetProfileRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ListProfilesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListProfilesResponse(_message.Message):
    __slots__ = ("profiles", "character_profiles", "group_profiles")
    class CharacterProfilesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class GroupProfilesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PROFILES_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_PROFILES_FIELD_NUMBER: _ClassVar[int]
    GROUP_PROFILES_FIELD_NUMBER: _ClassVar[int]
    profiles: _containers.RepeatedCompositeFieldContainer[Profile]
    character_profiles: _containers.ScalarMap[str, str]
    group_profiles: _containers.ScalarMap[str, str]
    def __init__(self, profiles: _Optional[_Iterable[_Union[Profile, _Mapping]]] = ..., character_profiles: _Optional[_Mapping[str, str]] = ..., group_profiles: _Optional[_Mapping[str, str]] = ...) -> None: ...

class DeleteProfileRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteProfileResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BindProfileRequest(_message.Message):
    __slots__ = ("character_key", "group_id", "profile")
    CHARACTER_KEY_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    character_key: str
    group_id: str
    profile: str
    def __init__(self, character_key: _Optional[str] = ..., group_id: _Optional[str] = ..., profile: _Optional[str] = ...) -> None: ...

class BindProfileResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Group(_message.Message):
    __slots__ = ("id", "name", "members", "disabled_members", "chats", "profile")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    DISABLED_MEMBERS_FIELD_NUMBER: _ClassVar[int]
    CHATS_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    members: _containers.RepeatedScalarFieldContainer[str]
    disabled_members: _containers.RepeatedScalarFieldContainer[str]
    chats: _containers.RepeatedScalarFieldContainer[str]
    profile: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., members: _Optional[_Iterable[str]] = ..., disabled_members: _Optional[_Iterable[str]] = ..., chats: _Optional[_Iterable[str]] = ..., profile: _Optional[str] = ...) -> None: ...

class ImportGroupRequest(_message.Message):
    __slots__ = ("json",)
    JSON_FIELD_NUMBER: _ClassVar[int]
    json: str
    def __init__(self, json: _Optional[str] = ...) -> None: ...

class GetGroupRequest(_message.Message):
    __slots__ = ("group_id",)
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    group_id: str
    def __init__(self, group_id: _Optional[str] = ...) -> None: ...

class ListGroupsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListGroupsResponse(_message.Message):
    __slots__ = ("groups",)
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    groups: _containers.RepeatedCompositeFieldContainer[Group]
    def __init__(self, groups: _Optional[_Iterable[_Union[Group, _Mapping]]] = ...) -> None: ...

class SetGroupMembersRequest(_message.Message):
    __slots__ = ("group_id", "disabled_members")
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    DISABLED_MEMBERS_FIELD_NUMBER: _ClassVar[int]
    group_id: str
    disabled_members: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, group_id: _Optional[str] = ..., disabled_members: _Optional[_Iterable[str]] = ...) -> None: ...

class Injection(_message.Message):
    __slots__ = ("chat_id", "key", "text", "position", "depth", "role", "scan", "enabled", "revision", "running_recap_version", "token_count", "auto_hidden_count", "trigger", "refreshed_at", "deleted")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SCAN_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    RUNNING_RECAP_VERSION_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    AUTO_HIDDEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    REFRESHED_AT_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    key: str
    text: str
    position: InjectionPosition
    depth: int
    role: InjectionRole
    scan: bool
    enabled: bool
    revision: int
    running_recap_version: int
    token_count: int
    auto_hidden_count: int
    trigger: RefreshTrigger
    refreshed_at: _timestamp_pb2.Timestamp
    deleted: bool
    def __init__(self, chat_id: _Optional[str] = ..., key: _Optional[str] = ..., text: _Optional[str] = ..., position: _Optional[_Union[InjectionPosition, str]] = ..., depth: _Optional[int] = ..., role: _Optional[_Union[InjectionRole, str]] = ..., scan: _Optional[bool] = ..., enabled: _Optional[bool] = ..., revision: _Optional[int] = ..., running_recap_version: _Optional[int] = ..., token_count: _Optional[int] = ..., auto_hidden_count: _Optional[int] = ..., trigger: _Optional[_Union[RefreshTrigger, str]] = ..., refreshed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted: _Optional[bool] = ...) -> None: ...

class GetInjectionRequest(_message.Message):
    __slots__ = ("chat_id", "key")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    key: str
    def __init__(self, chat_id: _Optional[str] = ..., key: _Optional[str] = ...) -> None: ...

class RefreshRequest(_message.Message):
    __slots__ = ("chat_id",)
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    def __init__(self, chat_id: _Optional[str] = ...) -> None: ...

class GetInclusionRequest(_message.Message):
    __slots__ = ("chat_id",)
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    def __init__(self, chat_id: _Optional[str] = ...) -> None: ...

class MessageInclusion(_message.Message):
    __slots__ = ("message_id", "included", "hidden", "token_count", "excluded_reason")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDED_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_REASON_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    included: bool
    hidden: bool
    token_count: int
    excluded_reason: str
    def __init__(self, message_id: _Optional[str] = ..., included: _Optional[bool] = ..., hidden: _Optional[bool] = ..., token_count: _Optional[int] = ..., excluded_reason: _Optional[str] = ...) -> None: ...

class GetInclusionResponse(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[MessageInclusion]
    def __init__(self, messages: _Optional[_Iterable[_Union[MessageInclusion, _Mapping]]] = ...) -> None: ...

class SubscribeRequest(_message.Message):
    __slots__ = ("chat_ids", "max_updates")
    CHAT_IDS_FIELD_NUMBER: _ClassVar[int]
    MAX_UPDATES_FIELD_NUMBER: _ClassVar[int]
    chat_ids: _containers.RepeatedScalarFieldContainer[str]
    max_updates: int
    def __init__(self, chat_ids: _Optional[_Iterable[str]] = ..., max_updates: _Optional[int] = ...) -> None: ...

class PromptMessage(_message.Message):
    __slots__ = ("role", "name", "content", "hidden", "message_id")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    role: InjectionRole
    name: str
    content: str
    hidden: bool
    message_id: str
    def __init__(self, role: _Optional[_Union[InjectionRole, str]] = ..., name: _Optional[str] = ..., content: _Optional[str] = ..., hidden: _Optional[bool] = ..., message_id: _Optional[str] = ...) -> None: ...

class ExtensionPrompt(_message.Message):
    __slots__ = ("key", "value", "position", "depth", "role", "scan")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SCAN_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    position: InjectionPosition
    depth: int
    role: InjectionRole
    scan: bool
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ..., position: _Optional[_Union[InjectionPosition, str]] = ..., depth: _Optional[int] = ..., role: _Optional[_Union[InjectionRole, str]] = ..., scan: _Optional[bool] = ...) -> None: ...

class RenderPromptRequest(_message.Message):
    __slots__ = ("chat_id", "mode", "story_string", "history", "continue_last", "extra", "generation_type", "dry_run", "seed", "authors_note", "examples", "texts")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    STORY_STRING_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    CONTINUE_LAST_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    GENERATION_TYPE_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    AUTHORS_NOTE_FIELD_NUMBER: _ClassVar[int]
    EXAMPLES_FIELD_NUMBER: _ClassVar[int]
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    mode: PromptMode
    story_string: str
    history: _containers.RepeatedCompositeFieldContainer[PromptMessage]
    continue_last: bool
    extra: _containers.RepeatedCompositeFieldContainer[ExtensionPrompt]
    generation_type: str
    dry_run: bool
    seed: int
    authors_note: ExtensionPrompt
    examples: _containers.RepeatedScalarFieldContainer[str]
    texts: WorldInfoTexts
    def __init__(self, chat_id: _Optional[str] = ..., mode: _Optional[_Union[PromptMode, str]] = ..., story_string: _Optional[str] = ..., history: _Optional[_Iterable[_Union[PromptMessage, _Mapping]]] = ..., continue_last: _Optional[bool] = ..., extra: _Optional[_Iterable[_Union[ExtensionPrompt, _Mapping]]] = ..., generation_type: _Optional[str] = ..., dry_run: _Optional[bool] = ..., seed: _Optional[int] = ..., authors_note: _Optional[_Union[ExtensionPrompt, _Mapping]] = ..., examples: _Optional[_Iterable[str]] = ..., texts: _Optional[_Union[WorldInfoTexts, _Mapping]] = ...) -> None: ...

class RenderPromptResponse(_message.Message):
    __slots__ = ("text", "messages", "world_info")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    WORLD_INFO_FIELD_NUMBER: _ClassVar[int]
    text: str
    messages: _containers.RepeatedCompositeFieldContainer[PromptMessage]
    world_info: ScanWorldInfoResponse
    def __init__(self, text: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[PromptMessage, _Mapping]]] = ..., world_info: _Optional[_Union[ScanWorldInfoResponse, _Mapping]] = ...) -> None: ...

class Job(_message.Message):
    __slots__ = ("job_id", "chat_id", "kind", "state", "message_id", "attempts", "last_error", "created_at", "updated_at", "result", "subject")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    chat_id: str
    kind: JobKind
    state: JobState
    message_id: str
    attempts: int
    last_error: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    result: str
    subject: str
    def __init__(self, job_id: _Optional[str] = ..., chat_id: _Optional[str] = ..., kind: _Optional[_Union[JobKind, str]] = ..., state: _Optional[_Union[JobState, str]] = ..., message_id: _Optional[str] = ..., attempts: _Optional[int] = ..., last_error: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., result: _Optional[str] = ..., subject: _Optional[str] = ...) -> None: ...

class GenerateSceneRecapRequest(_message.Message):
    __slots__ = ("chat_id", "message_id")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    message_id: str
    def __init__(self, chat_id: _Optional[str] = ..., message_id: _Optional[str] = ...) -> None: ...

class DetectSceneBreaksRequest(_message.Message):
    __slots__ = ("chat_id",)
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    def __init__(self, chat_id: _Optional[str] = ...) -> None: ...

class GenerateRunningRecapRequest(_message.Message):
    __slots__ = ("chat_id", "message_id")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    message_id: str
    def __init__(self, chat_id: _Optional[str] = ..., message_id: _Optional[str] = ...) -> None: ...

class RegenerateRunningRecapRequest(_message.Message):
    __slots__ = ("chat_id",)
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    def __init__(self, chat_id: _Optional[str] = ...) -> None: ...

class GenerateLoreRequest(_message.Message):
    __slots__ = ("chat_id", "message_id")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    message_id: str
    def __init__(self, chat_id: _Optional[str] = ..., message_id: _Optional[str] = ...) -> None: ...

class GenerateMessageRecapsRequest(_message.Message):
    __slots__ = ("chat_id", "message_ids")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    message_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, chat_id: _Optional[str] = ..., message_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ListJobsRequest(_message.Message):
    __slots__ = ("chat_id", "states", "page_size", "page_token")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    states: _containers.RepeatedScalarFieldContainer[JobState]
    page_size: int
    page_token: str
    def __init__(self, chat_id: _Optional[str] = ..., states: _Optional[_Iterable[_Union[JobState, str]]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListJobsResponse(_message.Message):
    __slots__ = ("jobs", "next_page_token")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[Job]
    next_page_token: str
    def __init__(self, jobs: _Optional[_Iterable[_Union[Job, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class CancelJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class RetryJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class WatchJobsRequest(_message.Message):
    __slots__ = ("chat_ids",)
    CHAT_IDS_FIELD_NUMBER: _ClassVar[int]
    chat_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, chat_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class Lorebook(_message.Message):
    __slots__ = ("name", "entry_count", "updated_at")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ENTRY_COUNT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    name: str
    entry_count: int
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., entry_count: _Optional[int] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ImportLorebookRequest(_message.Message):
    __slots__ = ("name", "json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    json: str
    def __init__(self, name: _Optional[str] = ..., json: _Optional[str] = ...) -> None: ...

class ImportCharacterBookRequest(_message.Message):
    __slots__ = ("name", "card")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    name: str
    card: bytes
    def __init__(self, name: _Optional[str] = ..., card: _Optional[bytes] = ...) -> None: ...

class ExportLorebookRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ExportLorebookResponse(_message.Message):
    __slots__ = ("json",)
    JSON_FIELD_NUMBER: _ClassVar[int]
    json: str
    def __init__(self, json: _Optional[str] = ...) -> None: ...

class ListLorebooksRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListLorebooksResponse(_message.Message):
    __slots__ = ("lorebooks", "next_page_token")
    LOREBOOKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    lorebooks: _containers.RepeatedCompositeFieldContainer[Lorebook]
    next_page_token: str
    def __init__(self, lorebooks: _Optional[_Iterable[_Union[Lorebook, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteLorebookRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteLorebookResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetLorebookEntryRequest(_message.Message):
    __slots__ = ("name", "uid")
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    name: str
    uid: str
    def __init__(self, name: _Optional[str] = ..., uid: _Optional[str] = ...) -> None: ...

class PutLorebookEntryRequest(_message.Message):
    __slots__ = ("name", "uid", "fields")
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    name: str
    uid: str
    fields: str
    def __init__(self, name: _Optional[str] = ..., uid: _Optional[str] = ..., fields: _Optional[str] = ...) -> None: ...

class DeleteLorebookEntryRequest(_message.Message):
    __slots__ = ("name", "uid")
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    name: str
    uid: str
    def __init__(self, name: _Optional[str] = ..., uid: _Optional[str] = ...) -> None: ...

class LorebookEntry(_message.Message):
    __slots__ = ("name", "uid", "json", "lorebook")
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    LOREBOOK_FIELD_NUMBER: _ClassVar[int]
    name: str
    uid: str
    json: str
    lorebook: Lorebook
    def __init__(self, name: _Optional[str] = ..., uid: _Optional[str] = ..., json: _Optional[str] = ..., lorebook: _Optional[_Union[Lorebook, _Mapping]] = ...) -> None: ...

class ScanWorldInfoRequest(_message.Message):
    __slots__ = ("chat_id", "generation_type", "dry_run", "seed", "history", "extra", "texts")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    GENERATION_TYPE_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    generation_type: str
    dry_run: bool
    seed: int
    history: _containers.RepeatedCompositeFieldContainer[PromptMessage]
    extra: _containers.RepeatedCompositeFieldContainer[ExtensionPrompt]
    texts: WorldInfoTexts
    def __init__(self, chat_id: _Optional[str] = ..., generation_type: _Optional[str] = ..., dry_run: _Optional[bool] = ..., seed: _Optional[int] = ..., history: _Optional[_Iterable[_Union[PromptMessage, _Mapping]]] = ..., extra: _Optional[_Iterable[_Union[ExtensionPrompt, _Mapping]]] = ..., texts: _Optional[_Union[WorldInfoTexts, _Mapping]] = ...) -> None: ...

class WorldInfoTexts(_message.Message):
    __slots__ = ("persona_description", "character_description", "character_personality", "character_depth_prompt", "scenario", "creator_notes", "character_name", "character_filter_name", "character_tags", "user_name")
    PERSONA_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_PERSONALITY_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_DEPTH_PROMPT_FIELD_NUMBER: _ClassVar[int]
    SCENARIO_FIELD_NUMBER: _ClassVar[int]
    CREATOR_NOTES_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_NAME_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_FILTER_NAME_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_TAGS_FIELD_NUMBER: _ClassVar[int]
    USER_NAME_FIELD_NUMBER: _ClassVar[int]
    persona_description: str
    character_description: str
    character_personality: str
    character_depth_prompt: str
    scenario: str
    creator_notes: str
    character_name: str
    character_filter_name: str
    character_tags: _containers.RepeatedScalarFieldContainer[str]
    user_name: str
    def __init__(self, persona_description: _Optional[str] = ..., character_description: _Optional[str] = ..., character_personality: _Optional[str] = ..., character_depth_prompt: _Optional[str] = ..., scenario: _Optional[str] = ..., creator_notes: _Optional[str] = ..., character_name: _Optional[str] = ..., character_filter_name: _Optional[str] = ..., character_tags: _Optional[_Iterable[str]] = ..., user_name: _Optional[str] = ...) -> None: ...

class ActivatedEntry(_message.Message):
    __slots__ = ("book", "uid", "position", "depth", "role", "order", "content", "outlet_name")
    BOOK_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    OUTLET_NAME_FIELD_NUMBER: _ClassVar[int]
    book: str
    uid: str
    position: int
    depth: int
    role: InjectionRole
    order: float
    content: str
    outlet_name: str
    def __init__(self, book: _Optional[str] = ..., uid: _Optional[str] = ..., position: _Optional[int] = ..., depth: _Optional[int] = ..., role: _Optional[_Union[InjectionRole, str]] = ..., order: _Optional[float] = ..., content: _Optional[str] = ..., outlet_name: _Optional[str] = ...) -> None: ...

class DepthPrompt(_message.Message):
    __slots__ = ("depth", "role", "text")
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    depth: int
    role: InjectionRole
    text: str
    def __init__(self, depth: _Optional[int] = ..., role: _Optional[_Union[InjectionRole, str]] = ..., text: _Optional[str] = ...) -> None: ...

class ScanWorldInfoResponse(_message.Message):
    __slots__ = ("activated", "before", "after", "depth", "an_top", "an_bottom", "examples_top", "examples_bottom", "outlets")
    class OutletsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ACTIVATED_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    AN_TOP_FIELD_NUMBER: _ClassVar[int]
    AN_BOTTOM_FIELD_NUMBER: _ClassVar[int]
    EXAMPLES_TOP_FIELD_NUMBER: _ClassVar[int]
    EXAMPLES_BOTTOM_FIELD_NUMBER: _ClassVar[int]
    OUTLETS_FIELD_NUMBER: _ClassVar[int]
    activated: _containers.RepeatedCompositeFieldContainer[ActivatedEntry]
    before: str
    after: str
    depth: _containers.RepeatedCompositeFieldContainer[DepthPrompt]
    an_top: str
    an_bottom: str
    examples_top: _containers.RepeatedScalarFieldContainer[str]
    examples_bottom: _containers.RepeatedScalarFieldContainer[str]
    outlets: _containers.ScalarMap[str, str]
    def __init__(self, activated: _Optional[_Iterable[_Union[ActivatedEntry, _Mapping]]] = ..., before: _Optional[str] = ..., after: _Optional[str] = ..., depth: _Optional[_Iterable[_Union[DepthPrompt, _Mapping]]] = ..., an_top: _Optional[str] = ..., an_bottom: _Optional[str] = ..., examples_top: _Optional[_Iterable[str]] = ..., examples_bottom: _Optional[_Iterable[str]] = ..., outlets: _Optional[_Mapping[str, str]] = ...) -> None: ...

class RecallRequest(_message.Message):
    __slots__ = ("chat_id", "query", "limit", "min_score")
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    chat_id: str
    query: str
    limit: int
    min_score: float
    def __init__(self, chat_id: _Optional[str] = ..., query: _Optional[str] = ..., limit: _Optional[int] = ..., min_score: _Optional[float] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("hits", "used_vectors")
    HITS_FIELD_NUMBER: _ClassVar[int]
    USED_VECTORS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[RecallHit]
    used_vectors: bool
    def __init__(self, hits: _Optional[_Iterable[_Union[RecallHit, _Mapping]]] = ..., used_vectors: _Optional[bool] = ...) -> None: ...

class RecallHit(_message.Message):
    __slots__ = ("message_id", "text", "keyword_score", "vector_score", "score", "tokens", "scene_recap", "part", "chat_id")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_SCORE_FIELD_NUMBER: _ClassVar[int]
    VECTOR_SCORE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    SCENE_RECAP_FIELD_NUMBER: _ClassVar[int]
    PART_FIELD_NUMBER: _ClassVar[int]
    CHAT_ID_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    text: str
    keyword_score: float
    vector_score: float
    score: float
    tokens: int
    scene_recap: bool
    part: int
    chat_id: str
    def __init__(self, message_id: _Optional[str] = ..., text: _Optional[str] = ..., keyword_score: _Optional[float] = ..., vector_score: _Optional[float] = ..., score: _Optional[float] = ..., tokens: _Optional[int] = ..., scene_recap: _Optional[bool] = ..., part: _Optional[int] = ..., chat_id: _Optional[str] = ...) -> None: ...
