// Whether a model provider is configured, as the server would find one, free
// of the `vscode` module so mocha tests it: the "Configure Tandem"
// notification and the walkthrough's second step go by it. The server looks
// in its settings (VS Code's `tandem.provider`), the settings files
// (`provider`, or provider variables in `env`: docs/settings.md) and the
// environment (VS Code's, plus the keys from SecretStorage).

/** The variables that choose or enable a provider (agent/config.rs reads the same). */
export const PROVIDER_VARIABLES = ['TANDEM_PROVIDER', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'];

function set(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '';
}

/** True when a settings file's object names a provider or sets a provider variable in `env`. */
export function fileConfiguresProvider(settings: unknown): boolean {
  if (typeof settings !== 'object' || settings === null) return false;
  const object = settings as { provider?: unknown; env?: unknown };
  if (set(object.provider)) return true;
  const env = object.env;
  if (typeof env !== 'object' || env === null) return false;
  return PROVIDER_VARIABLES.some((name) => set((env as Record<string, unknown>)[name]));
}

export interface ProviderSources {
  /** The server process's environment (VS Code's, with the stored keys). */
  env: Record<string, string | undefined>;
  /** `tandem.provider` and `tandem.baseUrl`. */
  provider?: string;
  baseUrl?: string;
  /** The parsed settings files that exist (unparsable ones left out). */
  files: unknown[];
}

export function providerConfigured(sources: ProviderSources): boolean {
  if (set(sources.provider) || set(sources.baseUrl)) return true;
  if (PROVIDER_VARIABLES.some((name) => set(sources.env[name]))) return true;
  return sources.files.some(fileConfiguresProvider);
}
