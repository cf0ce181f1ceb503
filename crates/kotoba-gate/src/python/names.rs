//! The names the Python gate knows (gate.md, execute_code): which modules, functions
//! and attributes are dangerous on their own, after a module (`os.system`), bare (not
//! as an attribute: `exec`, `getattr`), or when a module is passed around as a value.

use super::{
    DATA_UPLOAD, DYNAMIC_EVAL, FILE_WRITE, PROCESS_SPAWN, RAW_SOCKET, SECRET_READ, TREE_DELETION,
};

/// Dangerous wherever they appear, as a name or as an attribute: modules that spawn,
/// connect, upload or unpickle, and functions whose names say what they do. Reaching
/// names the gate cannot follow (`attrgetter`, frames, `gc` walks) counts as a spawn:
/// `os.system` could be behind them.
const ANYWHERE: &[(&str, &str)] = &[
    ("rmtree", TREE_DELETION),
    ("removedirs", TREE_DELETION),
    ("subprocess", PROCESS_SPAWN),
    ("_posixsubprocess", PROCESS_SPAWN),
    ("ctypes", PROCESS_SPAWN),
    ("cffi", PROCESS_SPAWN),
    ("importlib", PROCESS_SPAWN),
    ("zipimport", PROCESS_SPAWN),
    ("pkgutil", PROCESS_SPAWN),
    ("resolve_name", PROCESS_SPAWN),
    ("pydoc", PROCESS_SPAWN),
    ("load_source", PROCESS_SPAWN),
    ("load_module", PROCESS_SPAWN),
    ("exec_module", PROCESS_SPAWN),
    ("__import__", PROCESS_SPAWN),
    ("pty", PROCESS_SPAWN),
    ("pexpect", PROCESS_SPAWN),
    ("plumbum", PROCESS_SPAWN),
    ("create_subprocess_exec", PROCESS_SPAWN),
    ("create_subprocess_shell", PROCESS_SPAWN),
    ("posix_spawn", PROCESS_SPAWN),
    ("posix_spawnp", PROCESS_SPAWN),
    ("startfile", PROCESS_SPAWN),
    ("forkpty", PROCESS_SPAWN),
    ("set_executable", PROCESS_SPAWN),
    ("webbrowser", PROCESS_SPAWN),
    ("get_ipython", PROCESS_SPAWN),
    ("getattr", PROCESS_SPAWN),
    ("attrgetter", PROCESS_SPAWN),
    ("methodcaller", PROCESS_SPAWN),
    ("getattr_static", PROCESS_SPAWN),
    ("_getframe", PROCESS_SPAWN),
    ("currentframe", PROCESS_SPAWN),
    ("f_globals", PROCESS_SPAWN),
    ("f_locals", PROCESS_SPAWN),
    ("f_builtins", PROCESS_SPAWN),
    ("f_back", PROCESS_SPAWN),
    ("gi_frame", PROCESS_SPAWN),
    ("cr_frame", PROCESS_SPAWN),
    ("ag_frame", PROCESS_SPAWN),
    ("tb_frame", PROCESS_SPAWN),
    ("get_objects", PROCESS_SPAWN),
    ("get_referents", PROCESS_SPAWN),
    ("get_referrers", PROCESS_SPAWN),
    ("socket", RAW_SOCKET),
    ("_socket", RAW_SOCKET),
    ("socketserver", RAW_SOCKET),
    ("open_connection", RAW_SOCKET),
    ("open_unix_connection", RAW_SOCKET),
    ("start_server", RAW_SOCKET),
    ("start_unix_server", RAW_SOCKET),
    ("create_connection", RAW_SOCKET),
    ("create_server", RAW_SOCKET),
    ("create_unix_connection", RAW_SOCKET),
    ("create_unix_server", RAW_SOCKET),
    ("create_datagram_endpoint", RAW_SOCKET),
    ("wrap_socket", RAW_SOCKET),
    ("telnetlib", RAW_SOCKET),
    ("scapy", RAW_SOCKET),
    ("zmq", RAW_SOCKET),
    ("execfile", DYNAMIC_EVAL),
    ("__builtins__", DYNAMIC_EVAL),
    ("__builtin__", DYNAMIC_EVAL),
    ("builtins", DYNAMIC_EVAL),
    ("shelve", DYNAMIC_EVAL),
    ("dill", DYNAMIC_EVAL),
    ("cloudpickle", DYNAMIC_EVAL),
    ("jsonpickle", DYNAMIC_EVAL),
    ("read_pickle", DYNAMIC_EVAL),
    ("Unpickler", DYNAMIC_EVAL),
    ("unsafe_load", DYNAMIC_EVAL),
    ("runpy", DYNAMIC_EVAL),
    ("codeop", DYNAMIC_EVAL),
    ("timeit", DYNAMIC_EVAL),
    ("cProfile", DYNAMIC_EVAL),
    ("pdb", DYNAMIC_EVAL),
    ("doctest", DYNAMIC_EVAL),
    ("CodeType", DYNAMIC_EVAL),
    ("FunctionType", DYNAMIC_EVAL),
    ("co_code", DYNAMIC_EVAL),
    ("InteractiveConsole", DYNAMIC_EVAL),
    ("InteractiveInterpreter", DYNAMIC_EVAL),
    ("urlretrieve", FILE_WRITE),
    ("savefig", FILE_WRITE),
    ("write_text", FILE_WRITE),
    ("write_bytes", FILE_WRITE),
    ("symlink_to", FILE_WRITE),
    ("hardlink_to", FILE_WRITE),
    ("link_to", FILE_WRITE),
    ("savetxt", FILE_WRITE),
    ("savez", FILE_WRITE),
    ("savez_compressed", FILE_WRITE),
    ("copyfile", FILE_WRITE),
    ("copytree", FILE_WRITE),
    ("make_archive", FILE_WRITE),
    ("ExcelWriter", FILE_WRITE),
    ("unpack_archive", FILE_WRITE),
    ("smtplib", DATA_UPLOAD),
    ("aiosmtplib", DATA_UPLOAD),
    ("ftplib", DATA_UPLOAD),
    ("paramiko", DATA_UPLOAD),
    ("pysftp", DATA_UPLOAD),
    ("poplib", DATA_UPLOAD),
    ("imaplib", DATA_UPLOAD),
    ("nntplib", DATA_UPLOAD),
    ("xmlrpc", DATA_UPLOAD),
    ("pycurl", DATA_UPLOAD),
    ("websocket", DATA_UPLOAD),
    ("websockets", DATA_UPLOAD),
    ("upload_file", DATA_UPLOAD),
    ("upload_fileobj", DATA_UPLOAD),
    ("put_object", DATA_UPLOAD),
    ("putrequest", DATA_UPLOAD),
    ("sendmail", DATA_UPLOAD),
    ("keyring", SECRET_READ),
    ("dotenv", SECRET_READ),
    ("load_dotenv", SECRET_READ),
    ("dotenv_values", SECRET_READ),
    ("O_WRONLY", FILE_WRITE),
    ("O_RDWR", FILE_WRITE),
    ("O_APPEND", FILE_WRITE),
    ("O_CREAT", FILE_WRITE),
    ("O_TRUNC", FILE_WRITE),
];

/// Dangerous when not an attribute: `exec(…)`, `run = exec`, `(eval)(…)`, `g = globals`.
/// As attributes they are ordinary (`re.compile`, `model.eval()`, `cursor.execute`).
const BARE: &[(&str, &str)] = &[
    ("exec", DYNAMIC_EVAL),
    ("eval", DYNAMIC_EVAL),
    ("compile", DYNAMIC_EVAL),
    ("breakpoint", DYNAMIC_EVAL),
    ("vars", PROCESS_SPAWN),
    ("globals", PROCESS_SPAWN),
    ("locals", PROCESS_SPAWN),
];

/// Module-like names that `os`-style attributes hang off (`os.system`, `posix.system`).
const OS_NAMES: [&str; 3] = ["os", "posix", "nt"];

/// `os.<name>` that start a process (matched by prefix: `execv`, `spawnlp`, `popen2`).
const OS_SPAWN_PREFIXES: [&str; 7] = [
    "system",
    "popen",
    "exec",
    "spawn",
    "posix_spawn",
    "fork",
    "startfile",
];

/// `os.<name>` that write, move, delete or change files.
const OS_WRITES: [&str; 27] = [
    "remove",
    "unlink",
    "rename",
    "renames",
    "replace",
    "truncate",
    "ftruncate",
    "write",
    "writev",
    "pwrite",
    "pwritev",
    "chmod",
    "lchmod",
    "fchmod",
    "chown",
    "lchown",
    "fchown",
    "link",
    "symlink",
    "mkfifo",
    "mknod",
    "open",
    "utime",
    "setxattr",
    "removexattr",
    "sendfile",
    "copy_file_range",
];

/// `shutil.<name>` that write files.
const SHUTIL_WRITES: [&str; 8] = [
    "copy", "copy2", "copyfile", "copytree", "copymode", "copystat", "move", "chown",
];

/// HTTP client libraries: `<lib>….post/put/patch/delete` sends data out.
pub(super) const HTTP_LIBS: [&str; 9] = [
    "requests",
    "httpx",
    "aiohttp",
    "urllib3",
    "niquests",
    "grequests",
    "treq",
    "httplib2",
    "pycurl",
];

/// HTTP methods that send a body.
pub(super) const SENDING_METHODS: [&str; 4] = ["post", "put", "patch", "delete"];

/// Dunder names that are ordinary to touch (`__name__`, `super().__init__`, `__class__`).
/// Any other dunder (`__globals__`, `__subclasses__`, `__self__`, `__dict__`, `__mro__`)
/// reaches objects the gate cannot follow.
const PLAIN_DUNDERS: &[&str] = &[
    "__name__",
    "__qualname__",
    "__doc__",
    "__file__",
    "__module__",
    "__class__",
    "__init__",
    "__new__",
    "__call__",
    "__repr__",
    "__str__",
    "__len__",
    "__iter__",
    "__next__",
    "__enter__",
    "__exit__",
    "__aenter__",
    "__aexit__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__bool__",
    "__contains__",
    "__getitem__",
    "__setitem__",
    "__delitem__",
    "__add__",
    "__sub__",
    "__mul__",
    "__truediv__",
    "__floordiv__",
    "__mod__",
    "__pow__",
    "__neg__",
    "__abs__",
    "__format__",
    "__sizeof__",
    "__copy__",
    "__deepcopy__",
    "__float__",
    "__int__",
    "__index__",
    "__round__",
    "__radd__",
    "__rmul__",
    "__version__",
    "__all__",
    "__author__",
    "__slots__",
    "__annotations__",
    "__dataclass_fields__",
    "__main__",
    "__debug__",
    "__post_init__",
    "__future__",
    "__package__",
    "__path__",
    "__setattr__",
    "__delattr__",
    "__matmul__",
    "__and__",
    "__or__",
    "__xor__",
    "__invert__",
];

fn lookup(table: &[(&str, &'static str)], name: &str) -> Option<&'static str> {
    table.iter().find(|(n, _)| *n == name).map(|(_, l)| *l)
}

/// The label of a name that is dangerous in any position.
pub(super) fn anywhere(name: &str) -> Option<&'static str> {
    if name.ends_with("FileHandler") {
        return Some(FILE_WRITE);
    }
    lookup(ANYWHERE, name)
}

/// The label of a name that is dangerous when it is not an attribute.
pub(super) fn bare(name: &str) -> Option<&'static str> {
    lookup(BARE, name)
}

/// The label of a dunder name the gate cannot follow, if `name` is one.
pub(super) fn dunder(name: &str) -> Option<&'static str> {
    let is_dunder = name.len() > 4 && name.starts_with("__") && name.ends_with("__");
    if !is_dunder || PLAIN_DUNDERS.contains(&name) {
        return None;
    }
    Some(match name {
        "__builtins__" | "__builtin__" | "__code__" => DYNAMIC_EVAL,
        _ => PROCESS_SPAWN,
    })
}

/// The label of `module.name` (`os.system`, `shutil.copy`, `pickle.loads`,
/// `sys.modules`, `http.server`), looked up by the attribute's owner and its name.
pub(super) fn pair(owner: &str, name: &str) -> Option<&'static str> {
    if OS_NAMES.contains(&owner) {
        if OS_SPAWN_PREFIXES.iter().any(|p| name.starts_with(p))
            || matches!(name, "kill" | "killpg")
        {
            return Some(PROCESS_SPAWN);
        }
        if matches!(name, "rmdir" | "removedirs") {
            return Some(TREE_DELETION);
        }
        if OS_WRITES.contains(&name) {
            return Some(FILE_WRITE);
        }
        return None;
    }
    match (owner, name) {
        ("shutil", "rmtree") => Some(TREE_DELETION),
        ("shutil", n) if SHUTIL_WRITES.contains(&n) => Some(FILE_WRITE),
        ("sys", "modules" | "_getframe" | "meta_path" | "path_hooks") => Some(PROCESS_SPAWN),
        ("asyncio", "subprocess") => Some(PROCESS_SPAWN),
        ("pickle" | "cPickle" | "_pickle" | "marshal" | "joblib" | "torch", "load" | "loads") => {
            Some(DYNAMIC_EVAL)
        }
        ("yaml", "load" | "load_all" | "full_load" | "full_load_all") => Some(DYNAMIC_EVAL),
        ("code", "interact" | "compile_command") => Some(DYNAMIC_EVAL),
        ("profile", "run" | "runctx") => Some(DYNAMIC_EVAL),
        ("np" | "numpy", "save" | "tofile") => Some(FILE_WRITE),
        ("joblib", "dump") => Some(FILE_WRITE),
        ("http", "server") => Some(RAW_SOCKET),
        _ => None,
    }
}

/// The label of a module that, passed around as a value (`m = os`, `f(sys)`,
/// `[shutil]`), lets its dangerous attributes be reached where the gate cannot see.
pub(super) fn module_value(name: &str) -> Option<&'static str> {
    match name {
        "os" | "posix" | "nt" | "sys" => Some(PROCESS_SPAWN),
        "shutil" | "io" | "codecs" => Some(FILE_WRITE),
        "pickle" | "marshal" => Some(DYNAMIC_EVAL),
        n if HTTP_LIBS.contains(&n) => Some(DATA_UPLOAD),
        _ => None,
    }
}

/// The label of `from <module> import *` for a module with dangerous names.
pub(super) fn star_import(module: &str) -> Option<&'static str> {
    match module {
        "shutil" => Some(FILE_WRITE),
        "pickle" | "marshal" | "builtins" => Some(DYNAMIC_EVAL),
        "socket" => Some(RAW_SOCKET),
        m if HTTP_LIBS.contains(&m) => Some(DATA_UPLOAD),
        m if OS_NAMES.contains(&m) || m == "sys" || m == "pty" => Some(PROCESS_SPAWN),
        "subprocess" | "ctypes" | "importlib" | "os.path" => Some(PROCESS_SPAWN),
        "io" | "codecs" | "pathlib" | "tarfile" | "zipfile" => Some(FILE_WRITE),
        "urllib.request" | "http.client" | "smtplib" | "ftplib" => Some(DATA_UPLOAD),
        _ => None,
    }
}

/// Modules whose import alone spawns or can spawn a shell, though their names are too
/// common to flag everywhere (`sh`, `pipes`, `commands`).
pub(super) fn import_only(module: &str) -> Option<&'static str> {
    matches!(
        module,
        "sh" | "pipes" | "commands" | "popen2" | "imp" | "os.system"
    )
    .then_some(PROCESS_SPAWN)
}
