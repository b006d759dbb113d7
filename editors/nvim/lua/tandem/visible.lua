-- Text from the server shown in Neovim's message area and pickers (the
-- server's notices, a question's first line, its actions) with the
-- characters a terminal or Neovim acts on written as visible escapes:
-- `\x1b`, `\r`, `\u{202e}`. Buffers need none of this: Neovim shows such
-- characters itself (`^[`, `<202e>`). The message area does not: a
-- carriage return there sends the cursor back, and what follows overwrites
-- the notice ("bypassPermissions" hidden under "trusted").
local M = {}

--- Whether the character `code` is written as an escape: C0 controls but
--- the newline and the tab, DEL and the C1 controls, bidi embeddings,
--- overrides, isolates and marks, zero-width and other invisible format
--- characters, the line and paragraph separators, the tag characters.
local function acted_on(code)
  if code == 10 or code == 9 then
    return false
  end
  return code < 0x20
    or (code >= 0x7f and code <= 0x9f)
    or code == 0xad
    or code == 0x61c
    or code == 0x180e
    or (code >= 0x200b and code <= 0x200f)
    or (code >= 0x2028 and code <= 0x202e)
    or (code >= 0x2060 and code <= 0x206f)
    or code == 0xfeff
    or (code >= 0xfff9 and code <= 0xfffb)
    or (code >= 0xe0000 and code <= 0xe007f)
end

--- The code point of one UTF-8 sequence.
local function decode(char)
  local b1 = char:byte(1)
  if #char == 1 then
    return b1
  end
  local code = b1 % (2 ^ (7 - #char))
  for i = 2, #char do
    code = code * 64 + char:byte(i) % 64
  end
  return code
end

--- `text` with each such character made visible (a CRLF line end is a
--- newline).
function M.text(text)
  if type(text) ~= 'string' then
    return text
  end
  text = text:gsub('\r\n', '\n')
  return (text:gsub('[%z\1-\127\194-\244][\128-\191]*', function(char)
    local code = decode(char)
    if not acted_on(code) then
      return char
    end
    if code == 13 then
      return '\\r'
    end
    if code < 0x80 then
      return string.format('\\x%02x', code)
    end
    return string.format('\\u{%x}', code)
  end))
end

return M
