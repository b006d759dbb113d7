// What the status bar item says for a run state, free of `vscode` so mocha
// tests it.
import type { RunState } from './conversation';

/** The longest tool line the status bar shows. */
const TOOL_CHARS = 40;

export function statusBarText(state: RunState): { text: string; tooltip: string; warning: boolean } {
  switch (state.state) {
    case 'asking':
      return { text: '$(bell-dot) Tandem: waiting for your approval', tooltip: `${state.message}\nClick to answer in the Tandem panel.`, warning: true };
    case 'running': {
      const tool = state.tool ? (state.tool.length > TOOL_CHARS ? `${state.tool.slice(0, TOOL_CHARS - 1)}…` : state.tool) : 'running';
      return { text: `$(loading~spin) Tandem: ${tool}`, tooltip: 'Tandem is running. Click to open the Tandem panel (Stop is there).', warning: false };
    }
    default:
      return { text: '$(comment-discussion) Tandem', tooltip: 'Open the Tandem panel', warning: false };
  }
}
