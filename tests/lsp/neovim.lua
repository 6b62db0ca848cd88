-- `qg lsp` in Neovim's own LSP client, set up as the README says: open a
-- module, change its return type and save, wait for the diagnostics in its
-- importer (never opened), revert and save, wait for them to clear. Run by
-- tests/lsp.rs in the project's directory (`nvim --headless --clean`); it
-- writes what it saw, as JSON, to $QG_NVIM_OUT and quits.

local qg = assert(os.getenv("QG_BIN"), "QG_BIN")
local out = assert(os.getenv("QG_NVIM_OUT"), "QG_NVIM_OUT")
local wait = tonumber(os.getenv("QG_LSP_WAIT") or "120") * 1000

-- The README's set-up, with the binary under test.
vim.lsp.config("qg", {
  cmd = { qg, "lsp" },
  filetypes = { "python" },
  root_markers = { ".st3", "pyproject.toml", ".git" },
})
vim.lsp.enable("qg")

local seen = { steps = {} }

local function finish(ok, why)
  seen.ok = ok
  seen.why = why
  local file = assert(io.open(out, "w"))
  file:write(vim.json.encode(seen))
  file:close()
  vim.cmd("qa!")
end

local function step(what, condition)
  if not vim.wait(wait, condition, 50) then
    finish(false, "timed out waiting for " .. what)
  end
  table.insert(seen.steps, what)
end

-- Every run's end, as $/progress reports it.
local ended = 0
vim.api.nvim_create_autocmd("LspProgress", {
  callback = function(event)
    if event.data.params.value.kind == "end" then
      ended = ended + 1
    end
  end,
})

local function findings(path)
  local buffer = vim.uri_to_bufnr(vim.uri_from_fname(vim.fn.getcwd() .. "/" .. path))
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buffer)) do
    table.insert(found, { source = d.source, code = d.code, severity = d.severity, line = d.lnum })
  end
  return found
end

vim.cmd("edit app/shapes.py")
step("the client attached", function()
  return #vim.lsp.get_clients({ name = "qg", bufnr = 0 }) > 0
end)
step("the first run", function()
  return ended >= 1
end)
local original = vim.api.nvim_buf_get_lines(0, 0, -1, false)
local broken = vim.tbl_map(function(line)
  return (line:gsub("^def area%(side: float%) %-> float:", "def area(side: float) -> str:"))
end, original)
vim.api.nvim_buf_set_lines(0, 0, -1, false, broken)
vim.cmd("write")
step("diagnostics in the module and its importer", function()
  return #findings("app/geometry.py") >= 2 and #findings("app/shapes.py") >= 1
end)
seen.importer = findings("app/geometry.py")
seen.module = findings("app/shapes.py")
vim.api.nvim_buf_set_lines(0, 0, -1, false, original)
vim.cmd("write")
step("cleared diagnostics", function()
  return #findings("app/geometry.py") == 0 and #findings("app/shapes.py") == 0
end)
finish(true)
