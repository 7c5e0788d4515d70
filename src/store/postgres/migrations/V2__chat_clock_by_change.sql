-- For the resync of all-chats subscribers: chats changed lately.
CREATE INDEX chat_clock_by_change ON chat_clock (changed_at);
