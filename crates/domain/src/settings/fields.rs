//! The settings table: every setting, declared once, in the group of the
//! feature that owns it.
//!
//! The table is a list of groups, one per feature (the running recap's
//! injection, inclusion, the chat as a whole, the message-recap tier,
//! writing, World Info, lore, recall). A group is `name: Type { rows }`
//! and becomes a struct of its own ([`super::WorldInfoSettings`]...) and a
//! field of [`super::Settings`] (`settings.world_info.depth`). A row is one
//! setting: its documentation, its name as spelled in the API, its field
//! name inside its group, its type, its default, and, for numbers, the
//! check that turns the API's signed value into the setting's value (with
//! the field name the error reports). The API stays flat: from this table
//! come [`super::SettingsPatch`] (and so the stored JSON, one key per row
//! in table order, named as in the API), [`super::ApiSettings`], the
//! defaults, merging, `clear`, [`super::FIELD_NAMES`] and the conversions
//! to and from the proto message (`grpc::convert::settings`). No code
//! copies settings field by field: a feature reads its group (World Info's
//! scan takes [`super::WorldInfoSettings`] as it is).
//!
//! # Adding a setting
//!
//! 1. Add the field to `message Settings` in `proto/recap/v1/recap.proto`
//!    (as `optional`, so that an update can leave it out).
//! 2. Add a row to its feature's group here, `api_name => field: Type =
//!    default[, checked by check];`, with the API name as in the proto and
//!    the field name without the group's prefix (`world_info_depth =>
//!    depth`). A boolean, a string or one of the enums needs no check; an
//!    integer needs one (see the existing rows: a range is `range(field,
//!    low, high)`, the one range check of every feature's settings). An
//!    `Option<T>` type makes a setting whose default is unset and that
//!    only `clear` unsets. A new feature is a new group.
//! 3. Add the setting to the settings table of docs/settings.md. The integration
//!    tests (`api_settings`) check every row and its default against what
//!    the server serves, and that no proto field lacks a row.
//!
//! The proto conversion names every field of the generated `pb::Settings`,
//! so a proto field without a row here (or a row without a proto field)
//! does not compile. A new value type (another enum, say) also needs a
//! `SettingValue` impl (`super::values`) and a `Wire` impl in
//! `grpc::convert::settings`.

/// Hands the settings table to the macro `$then`, which turns the groups
/// and rows into items. Every group reads `/// docs` `name: Type { rows }`
/// and every row reads
/// `/// docs` `api_name => field: Type = default_expression[, checked by check_expression];`
/// where the check is a function from the API's value to the setting's value
/// (`Fn(i32) -> Result<u32, DomainError>`, for example). Names in the
/// expressions resolve where `$then` expands (`settings`, and the gRPC
/// conversion in recapd). Exported for that conversion; reach it as
/// `settings::settings_table`.
#[macro_export]
macro_rules! settings_table {
    ($then:ident) => {
        $then! {
            /// The running recap's injection: where it goes and its text.
            injection: InjectionSettings {
                /// Injection position.
                position => position: Position = Position::BeforePrompt;
                /// Injection depth, 0..=[`MAX_DEPTH`]; matters only for IN_CHAT.
                depth => depth: u32 = 2, checked by check_depth;
                /// Injection role.
                role => role: Role = Role::System;
                /// Whether World Info scans the injection.
                scan => scan: bool = false;
                /// The running-recap template; `{{running_recap}}` is replaced.
                template => template: String = DEFAULT_TEMPLATE.to_owned();
            }
            /// Which messages' memories the injection includes, within what token
            /// budget (counted with which vocabulary), and what auto-hide hides.
            inclusion: InclusionSettings {
                /// Whether user messages can be included.
                include_user_messages => include_user_messages: bool = true;
                /// Whether hidden messages can be included.
                include_system_messages => include_system_messages: bool = true;
                /// Whether narrator messages can be included.
                include_narrator_messages => include_narrator_messages: bool = true;
                /// Messages whose text has fewer tokens are excluded.
                message_length_threshold => message_length_threshold: u64 = 0,
                    checked by non_negative("settings.message_length_threshold");
                /// Token budget for message recaps; `None` is no limit.
                message_recap_context_limit => message_recap_context_limit: Option<u64> = None,
                    checked by non_negative("settings.message_recap_context_limit");
                /// How the budget is read.
                message_recap_context_type => message_recap_context_type: ContextType = ContextType::Absolute;
                /// The model's context size, needed by PERCENT budgets.
                max_context_tokens => max_context_tokens: Option<u64> = None,
                    checked by non_negative("settings.max_context_tokens");
                /// What counts every token of the chat.
                tokenizer => tokenizer: TokenizerKind = TokenizerKind::O200kBase;
                /// The `tokenizer.json` HUGGING_FACE counts with, by its file
                /// stem in the server's tokenizers directory; empty: none.
                tokenizer_name => tokenizer_name: String = String::new(),
                    checked by tokenizer_name("settings.tokenizer_name");
                /// Auto-hide keeps this many scenes visible; 0 disables auto-hide.
                auto_hide_scene_count => auto_hide_scene_count: u32 = 2, checked by check_scene_count;
                /// Whether `prefill` is put in front of a message's memory.
                show_prefill => show_prefill: bool = false;
            }
            /// The chat as a whole: whether it is on, whose messages count in a group
            /// chat, how soon it refreshes after a change.
            chat: ChatSettings {
                /// Enabled state of a chat that has no state of its own.
                default_chat_enabled => default_chat_enabled: bool = true;
                /// When true, `global_toggle_state` decides for every chat.
                use_global_toggle_state => use_global_toggle_state: bool = false;
                /// The global on/off switch, used when `use_global_toggle_state` is on.
                global_toggle_state => global_toggle_state: bool = true;
                /// Characters whose messages are excluded (group chats).
                disabled_character_keys => disabled_character_keys: Vec<String> = Vec::new();
                /// Quiet time before a debounced refresh runs; 0 makes it immediate.
                debounce_ms => debounce_ms: u64 = 300, checked by check_debounce_ms;
                /// The settings profile the chat uses (see `profiles`): over a chat, its
                /// own choice (empty: none, whatever its group's or character's binding);
                /// in the global settings, the tenant's default profile; in effective
                /// settings, the profile that applied (unset: none).
                profile => profile: Option<String> = None, checked by check_profile_name;
            }
            /// The message-recap tier's injection (`auto_recap_messages`).
            tier: TierSettings {
                /// Whether the message-recap tier (`auto_recap_messages`) is injected.
                message_recaps_enabled => enabled: bool = false;
                /// The message-recap tier's position.
                message_recaps_position => position: Position = Position::InChat;
                /// The message-recap tier's depth, for IN_CHAT.
                message_recaps_depth => depth: u32 = 4,
                    checked by depth_in_range("settings.message_recaps_depth");
                /// The message-recap tier's role.
                message_recaps_role => role: Role = Role::System;
                /// Whether World Info scans the message-recap tier.
                message_recaps_scan => scan: bool = false;
                /// The message-recap tier's template; `{{message_recaps}}` is replaced
                /// by the included recaps, oldest first, one per line.
                message_recaps_template => template: String = DEFAULT_MESSAGE_RECAPS_TEMPLATE.to_owned();
            }
            /// What recapd writes with the LLM and when: scene breaks, scene recaps, the running recap, message recaps.
            writing: WritingSettings {
                /// Whether a new character message may start a scene-break detection.
                auto_scene_break_detection => auto_scene_break_detection: bool = true;
                /// The newest this many candidates of a detection are not eligible.
                scene_break_offset => scene_break_offset: u32 = 8,
                    checked by depth_in_range("settings.scene_break_offset");
                /// A break needs at least this many candidates before it.
                scene_break_min_messages => scene_break_min_messages: u32 = 10, checked by check_min_messages;
                /// Whether recapd recaps the scene of each break it finds.
                auto_scene_recap => auto_scene_recap: bool = true;
                /// Whether recapd merges each scene recap it writes into the running recap.
                auto_running_recap => auto_running_recap: bool = true;
                /// Whether recapd recaps new messages into their `memory`.
                auto_message_recaps => auto_message_recaps: bool = false;
                /// How many messages behind the newest a message recap runs.
                message_recap_lag => message_recap_lag: u32 = 1, checked by check_message_recap_lag;
                /// The scene-break detection prompt.
                scene_break_prompt => scene_break_prompt: String = DEFAULT_SCENE_BREAK_PROMPT.to_owned();
                /// The scene recap prompt.
                scene_recap_prompt => scene_recap_prompt: String = DEFAULT_SCENE_RECAP_PROMPT.to_owned();
                /// The running-recap merge prompt.
                running_recap_prompt => running_recap_prompt: String = DEFAULT_RUNNING_RECAP_PROMPT.to_owned();
                /// The message recap prompt.
                message_recap_prompt => message_recap_prompt: String = DEFAULT_MESSAGE_RECAP_PROMPT.to_owned();
                /// The model asked; empty: the server's `--llm-model`.
                llm_model => llm_model: String = String::new();
                /// The most tokens an answer may have.
                llm_max_tokens => llm_max_tokens: u64 = 1024, checked by check_llm_max_tokens;
                /// Sampling temperature in thousandths; `None`: the model's own.
                llm_temperature => llm_temperature: Option<Milli> = None, checked by check_temperature;
                /// How a job asks for a JSON answer (`response_format`).
                llm_structured_output => llm_structured_output: StructuredOutput = StructuredOutput::Auto;
                /// Which request field carries `llm_max_tokens`.
                llm_max_tokens_field => llm_max_tokens_field: MaxTokensField = MaxTokensField::Auto;
                /// A merge's new running recap must have at least this fraction
                /// (in thousandths) of the characters of the version it builds on
                /// plus the scene recap; 0 turns the check off.
                running_recap_min_ratio => running_recap_min_ratio: Milli = Milli(200), checked by check_min_ratio;
                /// RegenerateRunningRecap holds back the newest this many scenes
                /// (when there are more); merges record it as `excluded_count`.
                running_recap_exclude_latest => running_recap_exclude_latest: u32 = 1,
                    checked by check_exclude_latest;
            }
            /// SillyTavern's World Info: how a scan reads the chat and which books it reads (world-info.js:69-82 at 51ad27f).
            world_info: WorldInfoSettings {
                /// Messages of the chat (newest first) World Info scans; an
                /// entry's own `scanDepth` wins.
                world_info_depth => depth: u32 = 2,
                    checked by range("settings.world_info_depth", 0, WI_DEPTH_MAX);
                /// Passes go on, each one message deeper, until this many entries
                /// are active; 0 turns it off.
                world_info_min_activations => min_activations: u32 = 0,
                    checked by range(
                        "settings.world_info_min_activations",
                        0,
                        WI_MIN_ACTIVATIONS_MAX,
                    );
                /// How deep `world_info_min_activations` may scan; 0: the whole chat.
                world_info_min_activations_depth_max => min_activations_depth_max: u32 = 0,
                    checked by range(
                        "settings.world_info_min_activations_depth_max",
                        0,
                        WI_MIN_ACTIVATIONS_DEPTH_MAX_MAX,
                    );
                /// The token budget of activated entries, in percent of
                /// `max_context_tokens`.
                world_info_budget => budget: u32 = 25,
                    checked by range("settings.world_info_budget", WI_BUDGET_MIN, WI_BUDGET_MAX);
                /// The most tokens the budget may be; 0: no cap.
                world_info_budget_cap => budget_cap: u32 = 0,
                    checked by range("settings.world_info_budget_cap", 0, WI_BUDGET_CAP_MAX);
                /// Whether scanned messages carry their speaker's name (`name: text`).
                world_info_include_names => include_names: bool = true;
                /// Whether activated entries' contents are scanned in turn (recursion).
                world_info_recursive => recursive: bool = false;
                /// Whether keys match case-sensitively (an entry's own flag wins).
                world_info_case_sensitive => case_sensitive: bool = false;
                /// Whether one-word keys match whole words only (an entry's own flag wins).
                world_info_match_whole_words => match_whole_words: bool = false;
                /// Whether inclusion groups keep their best-scoring members (an
                /// entry's own flag wins).
                world_info_use_group_scoring => use_group_scoring: bool = false;
                /// How character and global books are ordered against each other.
                world_info_character_strategy => character_strategy: CharacterStrategy = CharacterStrategy::CharacterFirst;
                /// The most scan passes (recursion included); 0: no limit.
                world_info_max_recursion_steps => max_recursion_steps: u32 = 0,
                    checked by range(
                        "settings.world_info_max_recursion_steps",
                        0,
                        WI_MAX_RECURSION_STEPS_MAX,
                    );
                /// The global lorebooks (SillyTavern's selected World Info).
                world_info_global_books => global_books: BookNames = BookNames::default(),
                    checked by book_names("settings.world_info_global_books");
                /// The character's lorebooks (its primary book, then its extra books).
                world_info_character_books => character_books: BookNames = BookNames::default(),
                    checked by book_names("settings.world_info_character_books");
                /// The chat's own lorebook (`chat_metadata.world_info`); empty: none.
                world_info_chat_book => chat_book: String = String::new(),
                    checked by optional_book_name("settings.world_info_chat_book");
                /// The persona's lorebook; empty: none.
                world_info_persona_book => persona_book: String = String::new(),
                    checked by optional_book_name("settings.world_info_persona_book");
            }
            /// The lorebook entries recapd writes (`lore`).
            lore: LoreSettings {
                /// Whether each scene recap recapd writes queues its lore extraction.
                auto_lore => auto: bool = false;
                /// The lore extraction prompt.
                lore_extract_prompt => extract_prompt: String = DEFAULT_LORE_EXTRACT_PROMPT.to_owned();
                /// The lore resolution prompt (which entry an entity already has).
                lore_resolve_prompt => resolve_prompt: String = DEFAULT_LORE_RESOLVE_PROMPT.to_owned();
                /// The lore merge prompt (an entity's new facts into its entry).
                lore_merge_prompt => merge_prompt: String = DEFAULT_LORE_MERGE_PROMPT.to_owned();
                /// The lore compaction prompt (an entry rewritten shorter).
                lore_compact_prompt => compact_prompt: String = DEFAULT_LORE_COMPACT_PROMPT.to_owned();
                /// The entity types extraction may answer, each
                /// `<name>[(constant)]: <description>`.
                lore_entity_types => entity_types: EntityTypes = EntityTypes::default();
                /// The name of the book recapd creates for a chat; `{{char}}`,
                /// `{{user}}` and `{{chat}}` are replaced.
                lore_book_name_template => book_name_template: String = DEFAULT_LORE_BOOK_NAME_TEMPLATE.to_owned();
                /// An entry past this many tokens is compacted; 0 turns compaction off.
                lore_compaction_threshold => compaction_threshold: u32 = 1000,
                    checked by range("settings.lore_compaction_threshold", 0, LORE_TOKENS_MAX);
                /// The most entries the chat's book may hold; new entities past it
                /// are not written.
                lore_max_entries => max_entries: u32 = 500,
                    checked by range("settings.lore_max_entries", 1, LORE_MAX_ENTRIES_MAX);
                /// The most keys an entry recapd writes has.
                lore_max_keys => max_keys: u32 = 10,
                    checked by range("settings.lore_max_keys", 1, LORE_MAX_KEYS_MAX);
                /// Whether a new chat book starts with copies of the entries of the
                /// books that apply to the chat (global, character, persona).
                lore_seed_from_active_books => seed_from_active_books: bool = false;
                /// Whether deleting the chat deletes the book recapd created for it.
                lore_delete_book_with_chat => delete_book_with_chat: bool = true;
            }
            /// Recall: the chat's history searched again, and the tier that injects it.
            recall: RecallSettings {
                /// Whether the recall tier (`auto_recap_recall`) is injected.
                recall_enabled => enabled: bool = false;
                /// How many of the latest messages make the recall tier's query.
                recall_query_messages => query_messages: u32 = 2,
                    checked by range("settings.recall_query_messages", 1, 100);
                /// Passages of the latest this many messages (not hidden by hand)
                /// are not recalled: the prompt has them.
                recall_exclude_recent => exclude_recent: u32 = 10,
                    checked by range("settings.recall_exclude_recent", 0, 100_000);
                /// The most tokens of recalled passages the tier injects.
                recall_max_tokens => max_tokens: u32 = 500,
                    checked by range("settings.recall_max_tokens", 0, 100_000);
                /// Passages whose fused score (0..=1) is lower are not recalled.
                recall_min_score => min_score: Milli = Milli(0), checked by recall_fraction("settings.recall_min_score");
                /// The recall tier's template; `{{recall}}` is replaced by the passages.
                recall_template => template: String = DEFAULT_RECALL_TEMPLATE.to_owned();
                /// The recall tier's position.
                recall_position => position: Position = Position::InChat;
                /// The recall tier's depth, for IN_CHAT.
                recall_depth => depth: u32 = 2, checked by depth_in_range("settings.recall_depth");
                /// The recall tier's role.
                recall_role => role: Role = Role::System;
                /// Whether World Info scans the recall tier.
                recall_scan => scan: bool = false;
                /// The longest passage (chunk) a message is cut into, in characters.
                recall_chunk_chars => chunk_chars: u32 = 1000,
                    checked by range("settings.recall_chunk_chars", MIN_CHUNK_CHARS, MAX_CHUNK_CHARS);
                /// A passage enters the vector ranking only with at least this
                /// cosine similarity to the query (0..=1).
                recall_min_similarity => min_similarity: Milli = Milli(250),
                    checked by recall_fraction("settings.recall_min_similarity");
                /// Other chats of the tenant whose history this chat's recall also searches.
                recall_chats => chats: ChatIds = ChatIds::default(), checked by check_recall_chats;
            }
        }
    };
}
