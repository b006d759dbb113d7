// The panel's model and permission-mode pickers, free of the DOM and of
// `vscode` so mocha tests them and the webview bundles them: which modes
// and models they offer, which value each shows, and the line under them
// when the server runs with something other than what was chosen.
//
// The truth is in two places: the user's settings (`tandem.model`,
// `tandem.permissionMode`, which the pickers write) and the server, which
// layers them over the settings files and says through `tandem.provider`
// which model and mode runs use now. The pickers show the server's answer,
// so a choice the server does not take (a folder's own settings file may
// make the mode stricter) is seen snapping back, with the reason beside it.

/** The permission modes the server knows (server/src/tools/permission_mode.rs), as the picker names them. */
export const PERMISSION_MODES: readonly { value: string; label: string; title: string }[] = [
  { value: 'default', label: 'Ask before changes', title: 'default: edits are reviewed in the Refactor Preview; other actions are asked first' },
  { value: 'acceptEdits', label: 'Accept edits', title: 'acceptEdits: edits are applied without review; shell commands are still asked' },
  { value: 'plan', label: 'Plan (read-only)', title: 'plan: read-only; the agent writes a plan for you to approve' },
  { value: 'bypassPermissions', label: 'Bypass permissions', title: 'bypassPermissions: nothing is asked (deny rules still apply)' },
];

/** The model picker's entry that asks for a model name not in its list (no model's name has parentheses). */
export const OTHER_MODEL = '(other)';

/** What the pickers show (the extension sends it whole on every change). */
export interface PickerState {
  /** `tandem.permissionMode` in the user's settings; '' when not set. */
  modeSetting: string;
  /** `tandem.model` in the user's settings; '' when not set. */
  modelSetting: string;
  /** The mode runs start in, as the server answers (`tandem.provider`'s `permissionMode`). */
  mode?: string;
  /** The model runs use, as the server answers. */
  model?: string;
  /** The models the server offers on its provider (`tandem.provider`'s `models`). */
  models: string[];
  /** The efforts each offered model takes (`tandem.provider`'s `efforts`; a model taking none is absent). */
  efforts: Record<string, string[]>;
  /** A change made during a run, which the server gets when the run ends. */
  pending: boolean;
  /** The settings changed and the server has not answered since: the settings are shown, without a note. */
  settling: boolean;
}

export function emptyPickers(): PickerState {
  return { modeSetting: '', modelSetting: '', models: [], efforts: {}, pending: false, settling: false };
}

/** The mode the picker shows: the chosen one while it waits for the run's end, else the server's. */
export function shownMode(state: PickerState): string {
  if ((state.pending || state.settling) && state.modeSetting !== '') return state.modeSetting;
  return state.mode ?? (state.modeSetting || 'default');
}

/** The model the picker shows ('' when none is known: the server names none and none is set). */
export function shownModel(state: PickerState): string {
  if ((state.pending || state.settling) && state.modelSetting !== '') return state.modelSetting;
  return state.model ?? state.modelSetting;
}

/** The models the picker lists: the one shown, the one set, then the provider's others; once each. */
export function modelChoices(state: PickerState): string[] {
  const choices: string[] = [];
  for (const model of [shownModel(state), state.modelSetting, ...state.models]) {
    if (model.trim() !== '' && !choices.includes(model)) choices.push(model);
  }
  return choices;
}

/** The efforts the model shown takes: the effort picker offers these (none: it is hidden). */
export function effortChoices(state: PickerState): string[] {
  const efforts = Object.prototype.hasOwnProperty.call(state.efforts, shownModel(state)) ? state.efforts[shownModel(state)] : undefined;
  return Array.isArray(efforts) ? efforts.filter((e) => typeof e === 'string') : [];
}

/**
 * The effort the next ask carries: the one chosen in the effort picker
 * while the model shown takes it; otherwise none (the settings' effort).
 */
export function askedEffort(state: PickerState, chosen: string): string | undefined {
  return chosen !== '' && effortChoices(state).includes(chosen) ? chosen : undefined;
}

/**
 * The line under the pickers, or undefined: a change that waits for the
 * current run to end, or the server running with another mode or model
 * than the settings chose (and why that happens).
 */
export function pickerNote(state: PickerState): string | undefined {
  if (state.pending) return 'Your change applies to the next run; this one goes on as it started.';
  if (state.settling) return undefined;
  const notes: string[] = [];
  if (state.modeSetting !== '' && state.mode !== undefined && state.mode !== state.modeSetting) {
    notes.push(
      `tandem.permissionMode is ${state.modeSetting}, but runs start in ${state.mode}: a settings file decides it (a folder's own .tandem/settings.json may make the mode stricter until you trust the folder).`,
    );
  }
  if (state.modelSetting !== '' && state.model !== undefined && state.model !== state.modelSetting) {
    notes.push(`tandem.model is ${state.modelSetting}, but runs use ${state.model}.`);
  }
  return notes.length > 0 ? notes.join(' ') : undefined;
}
