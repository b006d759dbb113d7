-- Generated from the Rust types (server/src/agent/events.rs and the types it names) by
-- `UPDATE_EXPECT=1 cargo test --locked --test integration protocol::`. Do not edit: the test fails when this
-- file differs from what the types give.
--
-- run_events: each run event's `type` and its fields (required ones first); `parent` on any
-- of them marks a sub-agent's event.
return {
  run_events = {
    ['provider'] = { required = { 'provider', 'model', 'reason' }, optional = { 'base_url' } },
    ['text'] = { required = { 'text' }, optional = {} },
    ['tool_call'] = { required = { 'id', 'name', 'input' }, optional = { 'kind', 'summary' } },
    ['tool_result'] = { required = { 'id', 'is_error', 'content' }, optional = {} },
    ['status'] = { required = { 'turn', 'usage' }, optional = {} },
    ['retry'] = { required = { 'attempt', 'delay_ms', 'reason' }, optional = {} },
    ['thinking'] = { required = { 'text' }, optional = {} },
    ['compact'] = { required = { 'before_tokens', 'after_tokens', 'reason' }, optional = {} },
    ['hook'] = { required = { 'name', 'message' }, optional = {} },
    ['sandbox'] = { required = { 'message' }, optional = {} },
    ['waiting'] = { required = { 'what' }, optional = {} },
    ['todo'] = { required = { 'todos' }, optional = {} },
    ['task_started'] = { required = { 'task_id', 'command' }, optional = {} },
    ['task_ended'] = { required = { 'task_id', 'command', 'status' }, optional = { 'exit_code', 'last_lines' } },
    ['end'] = { required = { 'status', 'text' }, optional = { 'usage', 'cost_usd', 'thread_id' } },
  },
  order = { 'provider', 'text', 'tool_call', 'tool_result', 'status', 'retry', 'thinking', 'compact', 'hook', 'sandbox', 'waiting', 'todo', 'task_started', 'task_ended', 'end' },
}
