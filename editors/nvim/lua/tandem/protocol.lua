-- Generated from the Rust types (server/src/protocol/) by
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
    ['tool_result'] = { required = { 'id', 'is_error', 'content' }, optional = { 'effects', 'edit' } },
    ['effect_changed'] = { required = { 'call_id', 'effect' }, optional = {} },
    ['question'] = { required = { 'id', 'kind' }, optional = {} },
    ['status'] = { required = { 'turn', 'usage' }, optional = {} },
    ['retry'] = { required = { 'attempt', 'delay_ms', 'reason' }, optional = {} },
    ['thinking'] = { required = { 'text' }, optional = {} },
    ['compact'] = { required = { 'before_tokens', 'after_tokens', 'reason' }, optional = {} },
    ['hook'] = { required = { 'name', 'message' }, optional = {} },
    ['sandbox'] = { required = { 'message' }, optional = {} },
    ['waiting'] = { required = { 'what' }, optional = {} },
    ['todo'] = { required = { 'todos' }, optional = {} },
    ['finding'] = { required = { 'finding' }, optional = {} },
    ['task_started'] = { required = { 'task_id', 'command' }, optional = {} },
    ['task_ended'] = { required = { 'task_id', 'command', 'status' }, optional = { 'exit_code', 'last_lines' } },
    ['end'] = { required = { 'status', 'text' }, optional = { 'usage', 'cost_usd', 'thread_id', 'run_id', 'changed_files', 'effects' } },
  },
  order = { 'provider', 'text', 'tool_call', 'tool_result', 'effect_changed', 'question', 'status', 'retry', 'thinking', 'compact', 'hook', 'sandbox', 'waiting', 'todo', 'finding', 'task_started', 'task_ended', 'end' },
  -- each edit status: whether its change is (at least partly) in the file, and the words a
  -- run's summary counts it under; edit_status_order: the order of the counts.
  edit_statuses = {
    ['applied'] = { landed = true, words = 'applied' },
    ['partial'] = { landed = true, words = 'partly applied' },
    ['rejected'] = { landed = false, words = 'declined' },
    ['not_applied'] = { landed = false, words = 'not applied' },
    ['superseded'] = { landed = false, words = 'superseded' },
    ['unknown'] = { landed = false, words = 'unknown' },
    ['written'] = { landed = true, words = 'applied' },
  },
  edit_status_order = { 'applied', 'partial', 'rejected', 'not_applied', 'superseded', 'unknown', 'written' },
  -- the fields of the other shapes (required ones first): the tandem.ask answer, an edit of
  -- the run (the answer's edits, a tool_result's edit), what one call did to one file.
  shapes = {
    ['AskAnswer'] = { required = { 'runId', 'status', 'text', 'edits', 'threadId' }, optional = { 'summary', 'costUsd', 'usage' } },
    ['AskStarted'] = { required = { 'runId', 'threadId' }, optional = {} },
    ['RunEdit'] = { required = { 'uri', 'status' }, optional = { 'ranges', 'declined', 'command', 'deleted', 'toolCallId' } },
    ['FileEffect'] = { required = { 'path', 'status' }, optional = { 'ranges', 'declined', 'by_command', 'deleted', 'untried' } },
  },
}
