-- The plugin's version: the release it comes with (Cargo.toml's version;
-- .ci/release-version checks that they agree). `:checkhealth tandem`
-- compares the binary's `tandem --version` with it.
return '0.1.0'
