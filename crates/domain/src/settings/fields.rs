//! The settings table: every setting, declared once.
//!
//! Each row is one setting: its documentation, its name as spelled in the
//! API, its type, its default, and, for numbers, the check that turns the
//! API's signed value into the setting's value (with the field name the
//! error reports). From this table come [`super::Settings`],
//! [`super::SettingsPatch`] (and so the stored JSON, one key per row in
//! table order), [`super::ApiSettings`], the defaults, merging, `clear`,
//! [`super::FIELD_NAMES`] and the conversions to and from the proto message
//! (`grpc::convert::settings`).
//!
//! # Adding a setting
//!
//! 1. Add the field to `message Settings` in `proto/recap/v1/recap.proto`
//!    (as `optional`, so that an update can leave it out).
//! 2. Add a row here, at the end, named as in the proto. A boolean, a
//!    string or one of the enums needs no check; an integer needs one (see
//!    the existing rows: a range is `range(field, low, high)`, the one
//!    range check of every feature's settings). An `Option<T>` type makes a setting whose default
//!    is unset and that only `clear` unsets.
//! 3. Add the setting to the settings table of docs/settings.md. The integration
//!    tests (`api_settings`) check every row and its default against what
//!    the server serves, and that no proto field lacks a row.
//!
//! The proto conversion names every field of the generated `pb::Settings`,
//! so a proto field without a row here (or a row without a proto field)
//! does not compile. A new value type (another enum, say) also needs a
//! `SettingValue` impl (`super::values`) and a `Wire` impl in
//! `grpc::convert::settings`.

/// Hands the settings table to the macro `$then`, which turns the rows into
/// items. Every row reads
/// `/// docs` `name: Type = default_expression[, checked by check_expression];`
/// where the check is a function from the API's value to the setting's value
/// (`Fn(i32) -> Result<u32, DomainError>`, for example). Names in the
/// expressions resolve where `$then` expands (`settings`, and the gRPC
/// conversion in recapd). Exported for that conversion; reach it as
/// `settings::settings_table`.
#[macro_export]
macro_rules! settings_table {
    ($then:ident) => {
        $then! {
            /// Injection position.
            position: Position = Position::BeforePrompt;
            /// Injection depth, 0..=[`MAX_DEPTH`]; matters only for IN_CHAT.
            depth: u32 = 2, checked by check_depth;
            /// Injection role.
            role: Role = Role::System;
            /// Whether World Info scans the injection.
            scan: bool = false;
            /// The running-recap template; `{{running_recap}}` is replaced.
            template: String = DEFAULT_TEMPLATE.to_owned();
            /// Whether user messages can be included.
            include_user_messages: bool = true;
            /// Whether hidden messages can be included.
            include_system_messages: bool = true;
            /// Whether narrator messages can be included.
            include_narrator_messages: bool = true;
            /// Messages whose text has fewer tokens are excluded.
            message_length_threshold: u64 = 0,
                checked by non_negative("settings.message_length_threshold");
            /// Token budget for message recaps; `None` is no limit.
            message_recap_context_limit: Option<u64> = None,
                checked by non_negative("settings.message_recap_context_limit");
            /// How the budget is read.
            message_recap_context_type: ContextType = ContextType::Absolute;
            /// The model's context size, needed by PERCENT budgets.
            max_context_tokens: Option<u64> = None,
                checked by non_negative("settings.max_context_tokens");
            /// Vocabulary for every token count of the chat.
            tokenizer: TokenizerKind = TokenizerKind::O200kBase;
            /// Auto-hide keeps this many scenes visible; 0 disables auto-hide.
            auto_hide_scene_count: u32 = 2, checked by check_scene_count;
            /// Whether `prefill` is put in front of a message's memory.
            show_prefill: bool = false;
            /// Enabled state of a chat that has no state of its own.
            default_chat_enabled: bool = true;
            /// When true, `global_toggle_state` decides for every chat.
            use_global_toggle_state: bool = false;
            /// The global on/off switch, used when `use_global_toggle_state` is on.
            global_toggle_state: bool = true;
            /// Characters whose messages are excluded (group chats).
            disabled_character_keys: Vec<String> = Vec::new();
            /// Quiet time before a debounced refresh runs; 0 makes it immediate.
            debounce_ms: u64 = 300, checked by check_debounce_ms;
            /// Whether the message-recap tier (`auto_recap_messages`) is injected.
            message_recaps_enabled: bool = false;
            /// The message-recap tier's position.
            message_recaps_position: Position = Position::InChat;
            /// The message-recap tier's depth, for IN_CHAT.
            message_recaps_depth: u32 = 4,
                checked by depth_in_range("settings.message_recaps_depth");
            /// The message-recap tier's role.
            message_recaps_role: Role = Role::System;
            /// Whether World Info scans the message-recap tier.
            message_recaps_scan: bool = false;
            /// The message-recap tier's template; `{{message_recaps}}` is replaced
            /// by the included recaps, oldest first, one per line.
            message_recaps_template: String = DEFAULT_MESSAGE_RECAPS_TEMPLATE.to_owned();
            /// Whether a new character message may start a scene-break detection.
            auto_scene_break_detection: bool = true;
            /// The newest this many candidates of a detection are not eligible.
            scene_break_offset: u32 = 8,
                checked by depth_in_range("settings.scene_break_offset");
            /// A break needs at least this many candidates before it.
            scene_break_min_messages: u32 = 10, checked by check_min_messages;
            /// Whether recapd recaps the scene of each break it finds.
            auto_scene_recap: bool = true;
            /// Whether recapd merges each scene recap it writes into the running recap.
            auto_running_recap: bool = true;
            /// Whether recapd recaps new messages into their `memory`.
            auto_message_recaps: bool = false;
            /// How many messages behind the newest a message recap runs.
            message_recap_lag: u32 = 1, checked by check_message_recap_lag;
            /// The scene-break detection prompt.
            scene_break_prompt: String = DEFAULT_SCENE_BREAK_PROMPT.to_owned();
            /// The scene recap prompt.
            scene_recap_prompt: String = DEFAULT_SCENE_RECAP_PROMPT.to_owned();
            /// The running-recap merge prompt.
            running_recap_prompt: String = DEFAULT_RUNNING_RECAP_PROMPT.to_owned();
            /// The message recap prompt.
            message_recap_prompt: String = DEFAULT_MESSAGE_RECAP_PROMPT.to_owned();
            /// The model asked; empty: the server's `--llm-model`.
            llm_model: String = String::new();
            /// The most tokens an answer may have.
            llm_max_tokens: u64 = 1024, checked by check_llm_max_tokens;
            /// Sampling temperature in thousandths; `None`: the model's own.
            llm_temperature: Option<Milli> = None, checked by check_temperature;
            /// How a job asks for a JSON answer (`response_format`).
            llm_structured_output: StructuredOutput = StructuredOutput::Auto;
            /// Which request field carries `llm_max_tokens`.
            llm_max_tokens_field: MaxTokensField = MaxTokensField::Auto;
            /// A merge's new running recap must have at least this fraction
            /// (in thousandths) of the characters of the version it builds on
            /// plus the scene recap; 0 turns the check off.
            running_recap_min_ratio: Milli = Milli(200), checked by check_min_ratio;
            // ---- SillyTavern World Info (world-info.js:69-82 at 51ad27f).
            /// Messages of the chat (newest first) World Info scans; an
            /// entry's own `scanDepth` wins.
            world_info_depth: u32 = 2,
                checked by range("settings.world_info_depth", 0, WI_DEPTH_MAX);
            /// Passes go on, each one message deeper, until this many entries
            /// are active; 0 turns it off.
            world_info_min_activations: u32 = 0,
                checked by range(
                    "settings.world_info_min_activations",
                    0,
                    WI_MIN_ACTIVATIONS_MAX,
                );
            /// How deep `world_info_min_activations` may scan; 0: the whole chat.
            world_info_min_activations_depth_max: u32 = 0,
                checked by range(
                    "settings.world_info_min_activations_depth_max",
                    0,
                    WI_MIN_ACTIVATIONS_DEPTH_MAX_MAX,
                );
            /// The token budget of activated entries, in percent of
            /// `max_context_tokens`.
            world_info_budget: u32 = 25,
                checked by range("settings.world_info_budget", WI_BUDGET_MIN, WI_BUDGET_MAX);
            /// The most tokens the budget may be; 0: no cap.
            world_info_budget_cap: u32 = 0,
                checked by range("settings.world_info_budget_cap", 0, WI_BUDGET_CAP_MAX);
            /// Whether scanned messages carry their speaker's name (`name: text`).
            world_info_include_names: bool = true;
            /// Whether activated entries' contents are scanned in turn (recursion).
            world_info_recursive: bool = false;
            /// Whether keys match case-sensitively (an entry's own flag wins).
            world_info_case_sensitive: bool = false;
            /// Whether one-word keys match whole words only (an entry's own flag wins).
            world_info_match_whole_words: bool = false;
            /// Whether inclusion groups keep their best-scoring members (an
            /// entry's own flag wins).
            world_info_use_group_scoring: bool = false;
            /// How character and global books are ordered against each other.
            world_info_character_strategy: CharacterStrategy = CharacterStrategy::CharacterFirst;
            /// The most scan passes (recursion included); 0: no limit.
            world_info_max_recursion_steps: u32 = 0,
                checked by range(
                    "settings.world_info_max_recursion_steps",
                    0,
                    WI_MAX_RECURSION_STEPS_MAX,
                );
            /// The global lorebooks (SillyTavern's selected World Info).
            world_info_global_books: BookNames = BookNames::default(),
                checked by book_names("settings.world_info_global_books");
            /// The character's lorebooks (its primary book, then its extra books).
            world_info_character_books: BookNames = BookNames::default(),
                checked by book_names("settings.world_info_character_books");
            /// The chat's own lorebook (`chat_metadata.world_info`); empty: none.
            world_info_chat_book: String = String::new(),
                checked by optional_book_name("settings.world_info_chat_book");
            /// The persona's lorebook; empty: none.
            world_info_persona_book: String = String::new(),
                checked by optional_book_name("settings.world_info_persona_book");
            // ---- Lorebook entries recapd writes (`lore`).
            /// Whether each scene recap recapd writes queues its lore extraction.
            auto_lore: bool = false;
            /// The lore extraction prompt.
            lore_extract_prompt: String = DEFAULT_LORE_EXTRACT_PROMPT.to_owned();
            /// The lore resolution prompt (which entry an entity already has).
            lore_resolve_prompt: String = DEFAULT_LORE_RESOLVE_PROMPT.to_owned();
            /// The lore merge prompt (an entity's new facts into its entry).
            lore_merge_prompt: String = DEFAULT_LORE_MERGE_PROMPT.to_owned();
            /// The lore compaction prompt (an entry rewritten shorter).
            lore_compact_prompt: String = DEFAULT_LORE_COMPACT_PROMPT.to_owned();
            /// The entity types extraction may answer, each
            /// `<name>[(constant)]: <description>`.
            lore_entity_types: EntityTypes = EntityTypes::default();
            /// The name of the book recapd creates for a chat; `{{char}}`,
            /// `{{user}}` and `{{chat}}` are replaced.
            lore_book_name_template: String = DEFAULT_LORE_BOOK_NAME_TEMPLATE.to_owned();
            /// An entry past this many tokens is compacted; 0 turns compaction off.
            lore_compaction_threshold: u32 = 1000,
                checked by range("settings.lore_compaction_threshold", 0, LORE_TOKENS_MAX);
            /// The most entries the chat's book may hold; new entities past it
            /// are not written.
            lore_max_entries: u32 = 500,
                checked by range("settings.lore_max_entries", 1, LORE_MAX_ENTRIES_MAX);
            /// The most keys an entry recapd writes has.
            lore_max_keys: u32 = 10,
                checked by range("settings.lore_max_keys", 1, LORE_MAX_KEYS_MAX);
            /// Whether a new chat book starts with copies of the entries of the
            /// books that apply to the chat (global, character, persona).
            lore_seed_from_active_books: bool = false;
            /// Whether deleting the chat deletes the book recapd created for it.
            lore_delete_book_with_chat: bool = true;
            // ---- Recall (`recall`): the chat's history searched again.
            /// Whether the recall tier (`auto_recap_recall`) is injected.
            recall_enabled: bool = false;
            /// How many of the latest messages make the recall tier's query.
            recall_query_messages: u32 = 2,
                checked by range("settings.recall_query_messages", 1, 100);
            /// Passages of the latest this many messages (not hidden by hand)
            /// are not recalled: the prompt has them.
            recall_exclude_recent: u32 = 10,
                checked by range("settings.recall_exclude_recent", 0, 100_000);
            /// The most tokens of recalled passages the tier injects.
            recall_max_tokens: u32 = 500,
                checked by range("settings.recall_max_tokens", 0, 100_000);
            /// Passages whose fused score (0..=1) is lower are not recalled.
            recall_min_score: Milli = Milli(0), checked by recall_fraction("settings.recall_min_score");
            /// The recall tier's template; `{{recall}}` is replaced by the passages.
            recall_template: String = DEFAULT_RECALL_TEMPLATE.to_owned();
            /// The recall tier's position.
            recall_position: Position = Position::InChat;
            /// The recall tier's depth, for IN_CHAT.
            recall_depth: u32 = 2, checked by depth_in_range("settings.recall_depth");
            /// The recall tier's role.
            recall_role: Role = Role::System;
            /// Whether World Info scans the recall tier.
            recall_scan: bool = false;
            /// The longest passage (chunk) a message is cut into, in characters.
            recall_chunk_chars: u32 = 1000,
                checked by range("settings.recall_chunk_chars", MIN_CHUNK_CHARS, MAX_CHUNK_CHARS);
            /// A passage enters the vector ranking only with at least this
            /// cosine similarity to the query (0..=1).
            recall_min_similarity: Milli = Milli(250),
                checked by recall_fraction("settings.recall_min_similarity");
            /// Other chats of the tenant whose history this chat's recall also searches.
            recall_chats: ChatIds = ChatIds::default(), checked by check_recall_chats;
        }
    };
}
