// The Tandem panel's script, in the webview (bundled by esbuild with
// ../panel/markdown and ../panel/input). It shows what the extension sends
// (panel/conversation.ts: a snapshot, then each new item) and sends back
// what the user does. It keeps no truth of its own beyond the draft in the
// input box: reloaded, it asks for the snapshot again. The model's text is
// rendered by panel/markdown.ts, which escapes everything, and only as
// the extension sends it; the page's CSP allows no inline script at all.
import { MarkdownStream, visibleControls } from '../panel/markdown';
import { applyMention, Attachment, History, mentionAt, MentionQuery, removeMention } from '../panel/input';
import { askedEffort, effortChoices, emptyPickers, modelChoices, OTHER_MODEL, PERMISSION_MODES, pickerNote, PickerState, shownMode, shownModel } from '../panel/pickers';
import { editStatusLabel } from '../panel/conversation';
import { statusLanded, statusTone } from '../events';
import type { FromWebview, PanelItem, PendingAsk, Snapshot, ToWebview } from '../panel/conversation';
import { findingLine, unhandled } from '../events';
import { taskEnd, todoBox } from '../transcriptText';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();


function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the panel has no #${id}`);
  return element as T;
}

const log = byId<HTMLElement>('log');
const asksBox = byId<HTMLElement>('asks');
const prompt = byId<HTMLTextAreaElement>('prompt');
const send = byId<HTMLButtonElement>('send');
const stop = byId<HTMLButtonElement>('stop');
const title = byId<HTMLElement>('title');
const mentions = byId<HTMLElement>('mentions');
const empty = byId<HTMLElement>('empty');
const chips = byId<HTMLElement>('chips');
const imageChips = byId<HTMLElement>('images');
const modePicker = byId<HTMLSelectElement>('modePicker');
const modelPicker = byId<HTMLSelectElement>('modelPicker');
const effortPicker = byId<HTMLSelectElement>('effortPicker');
const pickerNoteBox = byId<HTMLElement>('pickerNote');

let history = new History();
let running = false;

// ---- The transcript ---------------------------------------------------------

/** Streamed text being written, by where it goes (`run|parent`). */
interface OpenText {
  stream: MarkdownStream;
  body: HTMLElement;
  tail: HTMLElement;
  pending: string;
}
const openTexts = new Map<string, OpenText>();
const cards = new Map<string, HTMLElement>();
const runEnds = new Map<string, HTMLElement>();
/** Each undoable run's Undo (or Redo) button, by run id. */
const undoButtons = new Map<string, HTMLButtonElement>();
/** What an undone run changes on its edits line and cards, by run id. */
interface UndoneView {
  line: HTMLElement;
  /** Each entry whose edit landed, with the words and tone it has while the run's changes are in place. */
  entries: { entry: HTMLElement; words: Text; label: string; tone: string }[];
  /** The cards of the calls that made them, likewise. */
  cards: { card: HTMLElement; label: string; tone: string }[];
}
const undoneViews = new Map<string, UndoneView>();
let flushScheduled = false;

/**
 * Every text the transcript shows goes in through here (or through the
 * markdown renderer's escaping): a command, a path, a tool's output or the
 * model's text shows its control, bidi and zero-width characters as
 * visible escapes, so what the panel shows is what runs.
 */
function element(tag: string, className?: string, text?: string): HTMLElement {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = visibleControls(text);
  return e;
}

/** The transcript is scrolled to its end (within a line), so new text keeps it there. */
function atBottom(): boolean {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 40;
}

function keepBottom(wasAtBottom: boolean): void {
  if (wasAtBottom) log.scrollTop = log.scrollHeight;
}

/** Where an item goes: the log, or the card of the sub-agent call it belongs to. */
function container(item: PanelItem): HTMLElement {
  if (item.parent !== undefined) {
    const parent = cards.get(item.parent);
    const children = parent?.querySelector<HTMLElement>(':scope > .children');
    if (children) return children;
  }
  return log;
}

function textKey(item: PanelItem): string {
  return `${item.runId ?? ''}|${item.parent ?? ''}`;
}

/** A non-text item ends the stretch of text before it at the same place. */
function closeText(item: PanelItem): void {
  const key = textKey(item);
  const open = openTexts.get(key);
  if (open) {
    flushText(open);
    openTexts.delete(key);
  }
}

function appendText(item: PanelItem, immediate: boolean): void {
  const key = textKey(item);
  let open = openTexts.get(key);
  if (!open) {
    const body = element('div', item.parent !== undefined ? 'msg assistant nested' : 'msg assistant');
    const tail = element('div', 'tail');
    body.append(tail);
    container(item).append(body);
    open = { stream: new MarkdownStream(), body, tail, pending: '' };
    openTexts.set(key, open);
  }
  open.pending += item.text ?? '';
  if (immediate) flushText(open);
  else scheduleFlush();
}

/** Render what text came since the last frame: once per frame, whatever the number of pieces. */
function scheduleFlush(): void {
  if (flushScheduled) return;
  flushScheduled = true;
  requestAnimationFrame(() => {
    flushScheduled = false;
    const bottom = atBottom();
    for (const open of openTexts.values()) flushText(open);
    keepBottom(bottom);
  });
}

function flushText(open: OpenText): void {
  if (open.pending === '') return;
  const update = open.stream.push(open.pending);
  open.pending = '';
  for (const html of update.committed) {
    const block = element('div', 'block');
    block.innerHTML = html;
    open.body.insertBefore(block, open.tail);
  }
  open.tail.innerHTML = update.tail;
}

const STATUS_ICON: Record<string, string> = { running: '…', ok: '✓', error: '✗', partial: '◐', undone: '↶' };

function setCardStatus(card: HTMLElement, status: string, label: string): void {
  card.dataset.status = status;
  const badge = card.querySelector<HTMLElement>('.status');
  if (badge) {
    badge.textContent = `${STATUS_ICON[status] ?? ''} ${label}`.trim();
    badge.className = `status ${status}`;
  }
}

/** A clickable path: opens the file in the editor. */
function fileLink(path: string, label?: string): HTMLElement {
  const a = element('a', 'file', label ?? path) as HTMLAnchorElement;
  a.href = '#';
  a.dataset.path = path;
  return a;
}

function toolCard(item: PanelItem): void {
  const card = element('div', 'card');
  card.dataset.id = item.id ?? '';
  card.dataset.kind = item.kind?.type ?? 'other';
  card.dataset.run = item.runId ?? '';
  card.dataset.status = 'running';
  if (item.kind?.path) card.dataset.path = item.kind.path;
  const header = element('div', 'card-header');
  const toggle = element('button', 'toggle') as HTMLButtonElement;
  toggle.setAttribute('aria-expanded', 'false');
  const paths = item.kind?.path ? [item.kind.path] : (item.kind?.paths ?? []);
  toggle.append(element('span', 'name', item.name ?? 'tool'));
  // A call on files shows them as links instead of its summary (which names them).
  if (paths.length === 0) toggle.append(element('span', 'summary', (item.summary ?? '').split('\n')[0]));
  header.append(toggle);
  paths.slice(0, 3).forEach((path, i) => header.append(fileLink(path, item.shown_paths?.[i] ?? shortPath(path))));
  header.append(element('span', 'status running', '… running'));
  const details = element('div', 'details');
  details.hidden = true;
  if (item.kind?.type === 'execute' && item.kind.command) {
    details.append(element('div', 'label', 'Command'), element('pre', 'command', item.kind.command));
  } else if (item.input && Object.keys(item.input).length > 0) {
    details.append(element('div', 'label', 'Input'), element('pre', 'input', JSON.stringify(item.input, null, 2)));
  }
  card.append(header, details, element('div', 'children'));
  toggle.id = `toggle-${cards.size}`;
  details.id = `details-${cards.size}`;
  toggle.setAttribute('aria-controls', details.id);
  cards.set(item.id ?? `anon-${cards.size}`, card);
  container(item).append(card);
}

function shortPath(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts.length > 3 ? `…/${parts.slice(-2).join('/')}` : path;
}

/** A result's text, with a diff's lines marked (edits) and paths at a line start clickable. */
function resultBody(content: string, kind: string | undefined): HTMLElement {
  const pre = element('pre', 'result');
  for (const line of content.split('\n')) {
    const span = element('span', kind === 'edit' && /^\+(?!\+\+)/.test(line) ? 'add' : kind === 'edit' && /^-(?!--)/.test(line) ? 'del' : '', `${line}\n`);
    pre.append(span);
  }
  return pre;
}

function toolResult(item: PanelItem): void {
  const card = item.id !== undefined ? cards.get(item.id) : undefined;
  if (!card) return;
  const details = card.querySelector<HTMLElement>(':scope > .details');
  details?.querySelector(':scope > .result')?.remove();
  details?.append(resultBody(item.content ?? '', card.dataset.kind));
  const firstLine = (item.content ?? '').split('\n')[0];
  // An edit's result says what became of the change (applied, partial, declined, superseded).
  const edit = item.edit?.status;
  if (edit) setCardStatus(card, editClass(edit), editStatusLabel(edit));
  else setCardStatus(card, item.is_error ? 'error' : 'ok', item.is_error ? 'failed' : 'done');
  card.title = firstLine;
}

function editStatuses(item: PanelItem): void {
  const line = element('div', 'edits');
  const view: UndoneView = { line, entries: [], cards: [] };
  for (const edit of item.edits ?? []) {
    // The card of the call that made the edit takes its final status (an
    // edit found applied late); a file a command changed is no card's.
    const card = edit.toolCallId !== undefined && edit.command === undefined ? cards.get(edit.toolCallId) : undefined;
    if (card) setCardStatus(card, editClass(edit.status), editStatusLabel(edit.status));
    const command = edit.command !== undefined;
    const tone = command ? 'command' : editClass(edit.status);
    const label = editStatusLabel(edit.status, edit.command, edit.deleted);
    const entry = element('span', `edit ${tone}`);
    const words = document.createTextNode(` ${label}`);
    entry.append(fileLink(edit.path, edit.display), words);
    if (command) entry.title = `changed by: ${edit.command}`;
    line.append(entry);
    // What an undo takes back: the changes that landed.
    if (statusLanded(edit.status)) {
      view.entries.push({ entry, words, label, tone });
      if (card) view.cards.push({ card, label: editStatusLabel(edit.status), tone: editClass(edit.status) });
    }
  }
  if (item.undoable && item.runId) {
    const button = element('button', 'secondary undo') as HTMLButtonElement;
    button.dataset.undoRun = item.runId;
    line.append(button);
    undoButtons.set(item.runId, button);
    undoneViews.set(item.runId, view);
    setUndo(button, item.undone === true);
    showUndone(item.runId, item.undone === true);
  }
  log.append(line);
}

/**
 * A run's edits line and cards read as the run is now: undone (by this
 * panel, another front end or another process; a replayed thread knows it
 * from the run's checkpoint), each landed entry and card says "undone" and
 * a line says how to put it back; redone, they read as the run left them.
 */
function showUndone(runId: string, undone: boolean): void {
  const view = undoneViews.get(runId);
  if (!view) return;
  for (const { entry, words, label, tone } of view.entries) {
    entry.className = `edit ${undone ? 'undone' : tone}`;
    words.textContent = ` ${undone ? 'undone' : label}`;
  }
  for (const { card, label, tone } of view.cards) setCardStatus(card, undone ? 'undone' : tone, undone ? 'undone' : label);
  const since = view.line.querySelector(':scope > .undone-since');
  if (undone && !since) view.line.querySelector(':scope > button.undo')?.before(element('span', 'undone-since', '↶ undone since (Redo puts it back)'));
  if (!undone) since?.remove();
}

/** A run's button offers Undo, or Redo once the run is undone. */
function setUndo(button: HTMLButtonElement, undone: boolean): void {
  button.disabled = false;
  button.dataset.direction = undone ? 'redo' : 'undo';
  button.textContent = undone ? 'Redo' : 'Undo';
  button.title = undone ? "Put this run's changes back" : 'Take back every change this run made';
}

/** The colour an edit status gets: landed, landed in part (or not known), or not. */
function editClass(status: string): string {
  return statusTone(status);
}

function usageText(item: PanelItem): string {
  const usage = item.usage;
  if (!usage) return '';
  const n = (v: number | undefined) => (v ?? 0).toLocaleString('en-US');
  const parts = [`${n(usage.input_tokens)} in`, `${n(usage.output_tokens)} out`];
  if (usage.cache_read_input_tokens) parts.push(`${n(usage.cache_read_input_tokens)} cached`);
  if (typeof item.cost_usd === 'number') parts.push(`$${item.cost_usd < 0.01 ? item.cost_usd.toFixed(4) : item.cost_usd.toFixed(2)}`);
  return parts.join(' · ');
}

function runEnd(item: PanelItem): void {
  const line = element('div', `run-end ${item.status ?? ''}`);
  const status = item.status ?? 'ended';
  line.append(element('span', 'end-status', status === 'completed' ? 'Completed' : status.replace('_', ' ')));
  if (status !== 'completed' && item.text) line.append(element('span', 'end-text', `: ${item.text.split('\n')[0]}`));
  const usage = usageText(item);
  if (usage) line.append(element('span', 'usage', ` · ${usage}`));
  log.append(line);
  if (item.runId) runEnds.set(item.runId, line);
}

/** Show one item; `immediate` renders text at once (a snapshot), else on the next frame. */
function show(item: PanelItem, immediate: boolean): void {
  empty.hidden = true;
  if (item.type !== 'text') closeText(item);
  switch (item.type) {
    case 'prompt':
      // A new run: every stretch of text before it is finished.
      for (const open of openTexts.values()) flushText(open);
      openTexts.clear();
      log.append(element('div', 'msg user', item.text ?? ''));
      if (item.attachments && item.attachments.length > 0) log.append(sentAttachments(item.attachments));
      break;
    case 'text':
      appendText(item, immediate);
      break;
    case 'tool_call':
      toolCard(item);
      break;
    case 'tool_result':
      toolResult(item);
      break;
    case 'status':
      byId('usage').textContent = usageText(item);
      break;
    case 'end':
      for (const [key, open] of openTexts) {
        if (key.startsWith(`${item.runId ?? ''}|`)) flushText(open);
      }
      runEnd(item);
      byId('usage').textContent = usageText(item);
      break;
    case 'edits':
      editStatuses(item);
      break;
    case 'thinking': {
      const details = element('details', 'thinking');
      details.append(element('summary', '', 'Thinking'), element('pre', '', item.text ?? ''));
      container(item).append(details);
      break;
    }
    case 'retry':
      log.append(element('div', 'note', `Retrying (attempt ${item.attempt ?? '?'}): ${item.reason ?? ''}`));
      break;
    case 'compact':
      log.append(element('div', 'note', 'The conversation was summarised to stay within the context window.'));
      break;
    case 'hook':
      log.append(element('div', 'note', `Hook ${item.name ?? ''}: ${(item as { message?: string }).message ?? ''}`));
      break;
    case 'note':
      log.append(element('div', 'note', item.text ?? ''));
      break;
    case 'todo': {
      // The model's todo list, whole each time it changes (todo_write).
      if (item.parent !== undefined) break;
      const todos = item.todos ?? [];
      const done = todos.filter((todo) => todo.status === 'completed').length;
      const list = element('div', 'todo');
      list.append(element('div', 'todo-title', `Todo (${done}/${todos.length})`));
      for (const todo of todos) {
        list.append(element('div', `todo-item ${todo.status}`, `${todoBox(todo.status)} ${todo.content.split('\n')[0]}`));
      }
      container(item).append(list);
      break;
    }
    case 'finding':
      // A review's finding (report_finding); the Problems panel has it too.
      if (item.finding) container(item).append(element('div', `note finding ${item.finding.severity}`, `Finding ${findingLine(item.finding)}`));
      break;
    case 'task_started': {
      const note = element('div', 'note task', `Task ${item.task_id ?? '?'} started in the background: ${(item.command ?? '').split('\n')[0]} `);
      if (item.task_id && !endedTasks.has(item.task_id)) {
        // Stops it and every process it started (the extension asks the server).
        const button = element('button', 'task-stop', 'Stop') as HTMLButtonElement;
        button.dataset.stopTask = item.task_id;
        button.title = `Stop task ${item.task_id} and every process it started`;
        note.append(button);
        taskButtons.set(item.task_id, button);
      }
      container(item).append(note);
      break;
    }
    case 'task_ended':
      if (item.task_id) taskEnded(item.task_id, taskEnd({ status: item.status ?? 'ended', exit_code: item.exit_code }));
      container(item).append(element('div', 'note', `Task ${item.task_id ?? '?'} ${taskEnd({ status: item.status ?? 'ended', exit_code: item.exit_code })}: ${(item.command ?? '').split('\n')[0]}`));
      break;
    // Shown elsewhere: the provider line (its own message), the
    // sandbox notice and MCP waits (the transcript and the progress); an
    // edit confirmed late, by the run's edits at its end.
    case 'provider':
    case 'sandbox':
    case 'waiting':
    case 'effect_changed':
    // The server asks it (a prompt), never sends it as an event.
    case 'question':
      break;
    default:
      // A type this switch does not name fails to compile.
      unhandled(item.type);
      break;
  }
}

/** The Stop buttons of the tasks shown, by task id; the tasks seen to end. */
const taskButtons = new Map<string, HTMLButtonElement>();
const endedTasks = new Set<string>();

/** Task `id` ended (`state`: "stopped", "exited 0"): its Stop button says so and goes. */
function taskEnded(id: string, state: string): void {
  endedTasks.add(id);
  const button = taskButtons.get(id);
  if (!button) return;
  taskButtons.delete(id);
  const shown = element('span', 'task-state', `(${state})`);
  shown.dataset.task = id;
  button.replaceWith(shown);
}

function reset(snapshot: Snapshot): void {
  log.replaceChildren();
  openTexts.clear();
  cards.clear();
  runEnds.clear();
  undoButtons.clear();
  undoneViews.clear();
  taskButtons.clear();
  byId('usage').textContent = '';
  byId('model').textContent = snapshot.provider ?? '';
  empty.hidden = snapshot.items.length > 0;
  for (const item of snapshot.items) show(item, true);
  log.scrollTop = log.scrollHeight;
  setAsks(snapshot.asks);
  setState(snapshot.running, snapshot.title);
  // For the end-to-end test: the panel has its snapshot.
  document.body.dataset.ready = '1';
}

function setState(isRunning: boolean, threadTitle: string | undefined): void {
  running = isRunning;
  send.hidden = running;
  stop.hidden = !running;
  title.textContent = visibleControls(threadTitle ?? 'New conversation');
  title.title = threadTitle ?? '';
  document.body.classList.toggle('running', running);
}

// ---- An edit waiting in the Refactor Preview ---------------------------------

const reviewBox = byId<HTMLElement>('review');

/**
 * While an edit waits in the Refactor Preview: a notice pinned above the
 * input (which files, where to answer) with a button that shows the
 * preview, and the edit's card says it waits instead of "running".
 */
function setReview(paths: string[] | null): void {
  reviewBox.replaceChildren();
  reviewBox.hidden = paths === null;
  for (const card of document.querySelectorAll<HTMLElement>('#log .card[data-review="waiting"]')) {
    delete card.dataset.review;
    if (card.dataset.status === 'running') setCardStatus(card, 'running', 'running');
  }
  if (paths === null) return;
  const what = paths.length === 0 ? 'An edit' : `The edit to ${paths.join(', ')}`;
  reviewBox.append(element('div', 'review-message', `${what} waits for your review in the Refactor Preview: tick what to keep, then Apply or Discard there.`));
  const show = element('button', '', 'Show Refactor Preview') as HTMLButtonElement;
  show.dataset.showReview = 'true';
  // A refusal, drawn as the asks draw theirs.
  const reject = element('button', 'secondary', 'Reject: tell Tandem what to do instead') as HTMLButtonElement;
  reject.dataset.rejectReview = 'true';
  // Words that go to Tandem with whatever the user answers in the preview.
  const comment = element('button', 'secondary', 'Comment on this edit') as HTMLButtonElement;
  comment.dataset.commentReview = 'true';
  reviewBox.append(show, reject, comment);
  const card = [...document.querySelectorAll<HTMLElement>('#log .card[data-kind="edit"][data-status="running"]')].at(-1);
  if (card) {
    card.dataset.review = 'waiting';
    setCardStatus(card, 'running', 'waiting for review');
  }
}

/** Review comments kept for "Send review to agent": their count, and the button that sends them. */
function setReviewComments(count: number): void {
  const box = byId<HTMLElement>('reviewComments');
  box.replaceChildren();
  box.hidden = count === 0;
  if (count === 0) return;
  const send = element('button', '', `Send review to agent (${count} comment${count === 1 ? '' : 's'})`) as HTMLButtonElement;
  send.dataset.sendReview = 'true';
  box.append(send);
}

// ---- Permission asks ---------------------------------------------------------

function setAsks(asks: PendingAsk[]): void {
  const hadFocus = asksBox.contains(document.activeElement);
  asksBox.replaceChildren();
  for (const ask of asks) {
    const box = element('div', 'ask');
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', 'Tandem asks');
    box.dataset.askId = String(ask.id);
    box.append(element('pre', 'ask-message', ask.message));
    const buttons = element('div', 'ask-actions');
    for (const action of ask.actions) {
      // The refusals look alike: only what lets the call go on is primary.
      const refusal = action === 'Deny' || action === 'Reject' || action === 'Tell Tandem what to do instead';
      const button = element('button', refusal ? 'secondary' : '', action) as HTMLButtonElement;
      button.dataset.askId = String(ask.id);
      button.dataset.action = action;
      buttons.append(button);
    }
    box.append(buttons);
    asksBox.append(box);
  }
  asksBox.hidden = asks.length === 0;
  // Keyboard users land on the question, not on a button an Enter would press.
  const first = asksBox.querySelector<HTMLElement>('.ask');
  if (first && (hadFocus || document.activeElement === document.body)) {
    first.tabIndex = -1;
    first.focus();
  }
}

// ---- The model and mode pickers -----------------------------------------------

let pickers: PickerState = emptyPickers();
/** The effort picker's choice ('' for the settings' effort): it goes with each ask while the model takes it. */
let chosenEffort = '';

function option(value: string, label: string, title?: string): HTMLOptionElement {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = label;
  if (title) o.title = title;
  return o;
}

/** Show the pickers' state: the mode and model runs use (or the choice waiting for the run's end), and why they differ from the settings. */
function setPickers(state: PickerState): void {
  pickers = state;
  modePicker.replaceChildren(...PERMISSION_MODES.map((m) => option(m.value, m.label, m.title)));
  modePicker.value = shownMode(state);
  const models = modelChoices(state);
  modelPicker.replaceChildren(
    ...(models.length === 0 ? [option('', 'Model: provider default')] : models.map((m) => option(m, m))),
    option(OTHER_MODEL, 'Other model…', 'Type a model name (tandem.model)'),
  );
  modelPicker.value = models.length === 0 ? '' : shownModel(state) || models[0];
  // The effort picker: only for a model that takes one; a choice the
  // model shown does not take goes back to the settings' effort.
  const efforts = effortChoices(state);
  effortPicker.replaceChildren(option('', 'Effort: default', 'The effort setting, or the model’s own'), ...efforts.map((e) => option(e, `Effort: ${e}`)));
  chosenEffort = askedEffort(state, chosenEffort) ?? '';
  effortPicker.value = chosenEffort;
  effortPicker.hidden = efforts.length === 0;
  const note = pickerNote(state);
  pickerNoteBox.textContent = note ?? '';
  pickerNoteBox.hidden = note === undefined;
}

modePicker.addEventListener('change', () => {
  vscode.postMessage({ type: 'pickMode', mode: modePicker.value });
});
effortPicker.addEventListener('change', () => {
  chosenEffort = effortPicker.value;
});
modelPicker.addEventListener('change', () => {
  const chosen = modelPicker.value;
  // The picker shows the current model until the setting (or the server) says otherwise.
  setPickers(pickers);
  if (chosen !== '') vscode.postMessage({ type: 'pickModel', model: chosen });
});

// ---- Attachments: chips while composing, and in the sent prompt's card ---------

let attached: Attachment[] = [];
let draftTimer: ReturnType<typeof setTimeout> | undefined;

function chip(attachment: Attachment, removable: boolean): HTMLElement {
  const item = element('span', 'chip');
  item.setAttribute('role', 'listitem');
  item.title = attachment.detail;
  const label = attachment.value === 'selection' ? element('span', 'chip-label', attachment.label) : fileLink(attachment.value, attachment.label);
  label.classList.add('chip-label');
  item.append(label);
  if (removable) {
    const remove = element('button', 'chip-remove', '×') as HTMLButtonElement;
    remove.dataset.removeMention = attachment.value;
    remove.setAttribute('aria-label', `Remove ${attachment.detail}`);
    remove.title = 'Remove the attachment and its mention';
    item.append(remove);
  }
  return item;
}

function setChips(items: Attachment[]): void {
  attached = items;
  chips.replaceChildren(...items.map((a) => chip(a, true)));
  chips.hidden = items.length === 0;
}

/** A sent prompt's attachments, under its card. */
function sentAttachments(items: Attachment[]): HTMLElement {
  const line = element('div', 'chips sent');
  line.setAttribute('role', 'list');
  line.setAttribute('aria-label', 'Attached to this prompt');
  line.append(element('span', 'chips-title', 'Attached:'), ...items.map((a) => chip(a, false)));
  return line;
}

/** Ask (soon, once per pause in typing) what the draft attaches; no mention: no chips. */
function draftChanged(): void {
  if (draftTimer !== undefined) clearTimeout(draftTimer);
  if (!prompt.value.includes('@')) {
    draftTimer = undefined;
    if (attached.length > 0) setChips([]);
    return;
  }
  draftTimer = setTimeout(() => {
    draftTimer = undefined;
    vscode.postMessage({ type: 'draft', prompt: prompt.value });
  }, 150);
}

chips.addEventListener('click', (event) => {
  const remove = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-remove-mention]');
  if (!remove?.dataset.removeMention) return;
  prompt.value = removeMention(prompt.value, remove.dataset.removeMention);
  setChips(attached.filter((a) => a.value !== remove.dataset.removeMention));
  saveDraft();
  draftChanged();
  prompt.focus();
});

// ---- Images: pasted or dropped into the input, sent with the prompt --------

/** An image waiting to be sent: its name, media type and base64 bytes. */
interface Pasted {
  name: string;
  mediaType: string;
  data: string;
}

let pasted: Pasted[] = [];

function setImageChips(): void {
  imageChips.replaceChildren(
    ...pasted.map((image, index) => {
      const item = element('span', 'chip image-chip');
      item.setAttribute('role', 'listitem');
      item.title = image.name;
      const thumbnail = document.createElement('img');
      thumbnail.className = 'thumbnail';
      thumbnail.alt = image.name;
      thumbnail.src = `data:${image.mediaType};base64,${image.data}`;
      const remove = element('button', 'chip-remove', '×') as HTMLButtonElement;
      remove.dataset.removeImage = String(index);
      remove.setAttribute('aria-label', `Remove ${image.name}`);
      remove.title = 'Remove the image';
      item.append(thumbnail, element('span', 'chip-label', image.name), remove);
      return item;
    }),
  );
  imageChips.hidden = pasted.length === 0;
}

/** Read image files (a paste's, a drop's) as base64 and show them as chips. */
function addImages(files: File[]): void {
  for (const file of files.filter((f) => f.type.startsWith('image/'))) {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result ?? '');
      const comma = url.indexOf(',');
      if (comma < 0) return;
      pasted.push({ name: file.name || `pasted image ${pasted.length + 1}`, mediaType: file.type, data: url.slice(comma + 1) });
      setImageChips();
    };
    reader.readAsDataURL(file);
  }
}

prompt.addEventListener('paste', (event) => {
  const files = [...(event.clipboardData?.files ?? [])].filter((f) => f.type.startsWith('image/'));
  if (files.length === 0) return;
  // The image is attached, not pasted as text.
  event.preventDefault();
  addImages(files);
});

prompt.addEventListener('dragover', (event) => {
  if ([...(event.dataTransfer?.items ?? [])].some((i) => i.kind === 'file')) event.preventDefault();
});

prompt.addEventListener('drop', (event) => {
  const files = [...(event.dataTransfer?.files ?? [])].filter((f) => f.type.startsWith('image/'));
  if (files.length === 0) return;
  event.preventDefault();
  addImages(files);
});

imageChips.addEventListener('click', (event) => {
  const remove = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-remove-image]');
  if (!remove?.dataset.removeImage) return;
  pasted = pasted.filter((_, index) => String(index) !== remove.dataset.removeImage);
  setImageChips();
  prompt.focus();
});

// ---- The input box ---------------------------------------------------------

let mention: MentionQuery | undefined;
let mentionItems: { label: string; value: string; detail?: string }[] = [];
let mentionIndex = 0;

function closeMentions(): void {
  mention = undefined;
  mentions.hidden = true;
  prompt.removeAttribute('aria-activedescendant');
}

function showMentions(): void {
  mentions.replaceChildren();
  mentionItems.forEach((item, index) => {
    const option = element('div', index === mentionIndex ? 'option selected' : 'option');
    option.id = `mention-${index}`;
    option.setAttribute('role', 'option');
    option.setAttribute('aria-selected', String(index === mentionIndex));
    option.dataset.index = String(index);
    option.append(element('span', 'label', item.label));
    if (item.detail) option.append(element('span', 'detail', item.detail));
    mentions.append(option);
  });
  mentions.hidden = mentionItems.length === 0;
  if (mentionItems.length > 0) prompt.setAttribute('aria-activedescendant', `mention-${mentionIndex}`);
}

function pickMention(index: number): void {
  const item = mentionItems[index];
  if (!item || !mention) return;
  const applied = applyMention(prompt.value, prompt.selectionStart, mention, item.value);
  prompt.value = applied.text;
  prompt.setSelectionRange(applied.cursor, applied.cursor);
  vscode.postMessage({ type: 'mentioned', value: item.value });
  closeMentions();
  saveDraft();
  draftChanged();
}

function saveDraft(): void {
  vscode.setState({ draft: prompt.value });
}

function submit(): void {
  const text = prompt.value;
  if (text.trim() === '' || running) return;
  history.add(text);
  vscode.postMessage({ type: 'send', prompt: text, images: pasted.map(({ name, data }) => ({ name, data })), effort: askedEffort(pickers, chosenEffort) });
  pasted = [];
  setImageChips();
  prompt.value = '';
  saveDraft();
  draftChanged();
}

prompt.addEventListener('keydown', (event) => {
  if (!mentions.hidden && mentionItems.length > 0) {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      mentionIndex = (mentionIndex + (event.key === 'ArrowDown' ? 1 : mentionItems.length - 1)) % mentionItems.length;
      showMentions();
      event.preventDefault();
      return;
    }
    if (event.key === 'Enter' || event.key === 'Tab') {
      pickMention(mentionIndex);
      event.preventDefault();
      return;
    }
    if (event.key === 'Escape') {
      closeMentions();
      event.preventDefault();
      return;
    }
  }
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submit();
    return;
  }
  const onFirstLine = !prompt.value.slice(0, prompt.selectionStart).includes('\n');
  const onLastLine = !prompt.value.slice(prompt.selectionEnd).includes('\n');
  if (event.key === 'ArrowUp' && onFirstLine && !event.shiftKey) {
    const older = history.up(prompt.value);
    if (older !== undefined) {
      prompt.value = older;
      prompt.setSelectionRange(0, 0);
      event.preventDefault();
    }
  } else if (event.key === 'ArrowDown' && onLastLine && !event.shiftKey) {
    const newer = history.down();
    if (newer !== undefined) {
      prompt.value = newer;
      prompt.setSelectionRange(newer.length, newer.length);
      event.preventDefault();
    }
  } else if (event.key === 'Escape' && running) {
    vscode.postMessage({ type: 'stop' });
  }
});

prompt.addEventListener('input', () => {
  saveDraft();
  draftChanged();
  const found = mentionAt(prompt.value, prompt.selectionStart);
  if (!found) {
    closeMentions();
    return;
  }
  mention = found;
  vscode.postMessage({ type: 'mentionQuery', query: found.query });
});

mentions.addEventListener('mousedown', (event) => {
  const option = (event.target as HTMLElement).closest<HTMLElement>('.option');
  if (option?.dataset.index) {
    event.preventDefault();
    pickMention(Number(option.dataset.index));
  }
});

send.addEventListener('click', submit);
stop.addEventListener('click', () => vscode.postMessage({ type: 'stop' }));
byId('new').addEventListener('click', () => vscode.postMessage({ type: 'newThread' }));
byId('threads').addEventListener('click', () => vscode.postMessage({ type: 'resume' }));
byId('selection').addEventListener('click', () => vscode.postMessage({ type: 'mentionSelection' }));

// Clicks in the transcript: file links, web links, card toggles, ask actions.
document.addEventListener('click', (event) => {
  const target = event.target as HTMLElement;
  const link = target.closest<HTMLAnchorElement>('a');
  if (link) {
    event.preventDefault();
    if (link.dataset.path) vscode.postMessage({ type: 'open', path: link.dataset.path });
    else if (link.dataset.url) vscode.postMessage({ type: 'openUrl', url: link.dataset.url });
    return;
  }
  const toggle = target.closest<HTMLButtonElement>('button.toggle');
  if (toggle) {
    const details = toggle.closest('.card')?.querySelector<HTMLElement>(':scope > .details');
    if (details) {
      details.hidden = !details.hidden;
      toggle.setAttribute('aria-expanded', String(!details.hidden));
    }
    return;
  }
  const undo = target.closest<HTMLButtonElement>('button[data-undo-run]');
  if (undo?.dataset.undoRun) {
    // One at a time: the button comes back when the extension says how it went.
    if (undo.disabled) return;
    undo.disabled = true;
    vscode.postMessage({ type: 'undo', runId: undo.dataset.undoRun, direction: undo.dataset.direction === 'redo' ? 'redo' : 'undo' });
    return;
  }
  if (target.closest('button[data-show-review]')) {
    vscode.postMessage({ type: 'showReview' });
    return;
  }
  if (target.closest('button[data-reject-review]')) {
    vscode.postMessage({ type: 'rejectReview' });
    return;
  }
  if (target.closest('button[data-send-review]')) {
    vscode.postMessage({ type: 'sendReview' });
    return;
  }
  if (target.closest('button[data-comment-review]')) {
    vscode.postMessage({ type: 'commentReview' });
    return;
  }
  const copy = target.closest<HTMLButtonElement>('.code > button.copy');
  if (copy) {
    // The code as the model wrote it (highlighting is only markup around it).
    const code = copy.parentElement?.querySelector('pre')?.textContent ?? '';
    vscode.postMessage({ type: 'copy', text: code });
    copy.textContent = 'Copied';
    setTimeout(() => (copy.textContent = 'Copy'), 1500);
    return;
  }
  const stopTask = target.closest<HTMLButtonElement>('button[data-stop-task]');
  if (stopTask?.dataset.stopTask) {
    if (stopTask.disabled) return;
    stopTask.disabled = true;
    stopTask.textContent = 'Stopping…';
    vscode.postMessage({ type: 'stopTask', taskId: stopTask.dataset.stopTask });
    return;
  }
  const action = target.closest<HTMLButtonElement>('button[data-action]');
  if (action?.dataset.askId && action.dataset.action) {
    vscode.postMessage({ type: 'answer', id: Number(action.dataset.askId), title: action.dataset.action });
  }
});

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  switch (message.op) {
    case 'reset':
      reset(message.snapshot);
      break;
    case 'item': {
      const bottom = atBottom();
      show(message.item, false);
      keepBottom(bottom);
      break;
    }
    case 'asks':
      setAsks(message.asks);
      break;
    case 'provider':
      byId('model').textContent = message.text;
      break;
    case 'state':
      setState(message.running, message.title);
      break;
    case 'undo': {
      const button = undoButtons.get(message.runId);
      if (button) setUndo(button, message.undone);
      showUndone(message.runId, message.undone);
      break;
    }
    case 'history':
      history = new History(message.entries);
      break;
    case 'mentions':
      if (mention && mention.query === message.query) {
        mentionItems = message.items;
        mentionIndex = 0;
        showMentions();
      }
      break;
    case 'insert': {
      const at = prompt.selectionStart;
      prompt.value = prompt.value.slice(0, at) + message.text + prompt.value.slice(prompt.selectionEnd);
      prompt.setSelectionRange(at + message.text.length, at + message.text.length);
      prompt.focus();
      saveDraft();
      draftChanged();
      break;
    }
    case 'focus':
      prompt.focus();
      break;
    case 'task':
      taskEnded(message.taskId, message.state);
      break;
    case 'review':
      setReview(message.paths);
      break;
    case 'reviewComments':
      setReviewComments(message.count);
      break;
    case 'pickers':
      setPickers(message.state);
      break;
    case 'attachments':
      if (message.prompt === prompt.value) setChips(message.items);
      break;
  }
});

const saved = vscode.getState() as { draft?: string } | undefined;
if (typeof saved?.draft === 'string') prompt.value = saved.draft;
vscode.postMessage({ type: 'ready' });
setPickers(pickers);
draftChanged();
