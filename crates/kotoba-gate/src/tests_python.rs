//! Table and property tests for the Python gate (gate.md, execute_code): every spelling
//! that reaches a process, a write, an upload or a secret indirectly is dangerous with
//! its label, ordinary analysis code stays ordinary, and no input makes it panic.

use std::path::Path;
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::*;

/// Asserts every snippet is dangerous with its label, and that a code card for it
/// offers no grant at all.
fn assert_dangerous(table: &[(&str, &str)]) {
    for (src, label) in table {
        assert_eq!(
            is_dangerous_python(src).as_deref(),
            Some(*label),
            "{src:?}: {:?}",
            python::python_danger(src)
        );
        let d = classify(
            &Action::Code {
                code: src.to_string(),
                family: "execute_code".into(),
            },
            Path::new("."),
            true,
        );
        assert_eq!(d.dangerous_label(), Some(*label), "{src:?}");
        assert!(!d.can_always && !d.can_always_exact, "{src:?}");
    }
}

#[test]
fn python_reached_through_sys_modules_or_getattr_is_a_process_spawn() {
    assert_dangerous(&[
        ("import sys\nsys.modules['os'].system('id')", PROCESS_SPAWN),
        ("import os\nvars(os)['system']('id')", PROCESS_SPAWN),
        ("import os\ngetattr(os, 'sys' + 'tem')('id')", PROCESS_SPAWN),
        (
            "getattr(__import__('o' + 's'), 'system')('id')",
            PROCESS_SPAWN,
        ),
        (
            "import importlib\nimportlib.import_module('os').system('id')",
            PROCESS_SPAWN,
        ),
        ("globals()['__builtins__']", PROCESS_SPAWN),
        ("locals()['x']", PROCESS_SPAWN),
        ("f = getattr\nf(m, n)()", PROCESS_SPAWN),
        (
            "from operator import attrgetter\nattrgetter('system')(m)",
            PROCESS_SPAWN,
        ),
        ("import sys\nsys._getframe().f_globals['os']", PROCESS_SPAWN),
        (
            "import inspect\ninspect.currentframe().f_back",
            PROCESS_SPAWN,
        ),
        ("import gc\ngc.get_objects()", PROCESS_SPAWN),
        ("().__class__.__base__.__subclasses__()", PROCESS_SPAWN),
        ("f.__init__.__globals__['os']", PROCESS_SPAWN),
        ("print.__self__", PROCESS_SPAWN),
        ("m = sys\nm.modules['os']", PROCESS_SPAWN),
        ("x.__dict__['system']", PROCESS_SPAWN),
        ("object.__getattribute__(m, 'system')", PROCESS_SPAWN),
        (
            "import pkgutil\npkgutil.resolve_name('os:system')('id')",
            PROCESS_SPAWN,
        ),
        (
            "import pydoc\npydoc.locate('os.system')('id')",
            PROCESS_SPAWN,
        ),
        ("import imp\nimp.load_source('m', 'x.py')", PROCESS_SPAWN),
    ]);
}

#[test]
fn os_and_its_functions_under_other_names_are_a_process_spawn() {
    assert_dangerous(&[
        ("import os as o\no.system('id')", PROCESS_SPAWN),
        ("from os import system as s\ns('id')", PROCESS_SPAWN),
        ("from os import *\nsystem('id')", PROCESS_SPAWN),
        ("import os\nrun = os.system\nrun('id')", PROCESS_SPAWN),
        ("import os\nm = os\nm.system('id')", PROCESS_SPAWN),
        ("import os\nlist(map(os.system, ['id']))", PROCESS_SPAWN),
        ("import os.path\nos.path.os.system('id')", PROCESS_SPAWN),
        ("import os.path as p\np.os.system('id')", PROCESS_SPAWN),
        ("import posix\nposix.system('id')", PROCESS_SPAWN),
        ("from subprocess import check_output as co", PROCESS_SPAWN),
        (
            "import asyncio\nasyncio.create_subprocess_shell('id')",
            PROCESS_SPAWN,
        ),
        (
            "import os\nos.posix_spawn('/bin/sh', ['sh'], {})",
            PROCESS_SPAWN,
        ),
        ("import os\nos.fork()", PROCESS_SPAWN),
        (
            "import webbrowser\nwebbrowser.open('http://x')",
            PROCESS_SPAWN,
        ),
        ("import sh", PROCESS_SPAWN),
        ("x = f'{__import__(\"os\").system(\"id\")}'", PROCESS_SPAWN),
        ("print(f\"{os.popen('id').read()}\")", PROCESS_SPAWN),
        ("print(f'{x!r:>{os.system(\"id\")}}')", PROCESS_SPAWN),
        ("t'{os.system(\"id\")}'", PROCESS_SPAWN),
    ]);
}

#[test]
fn eval_and_exec_under_any_name_are_dynamic_eval() {
    assert_dangerous(&[
        ("run = exec\nrun('print(1)')", DYNAMIC_EVAL),
        ("(exec)('print(1)')", DYNAMIC_EVAL),
        ("e = eval\ne('1')", DYNAMIC_EVAL),
        ("b = __builtins__", DYNAMIC_EVAL),
        ("import builtins\nbuiltins.exec('x')", DYNAMIC_EVAL),
        ("from builtins import eval as ev", DYNAMIC_EVAL),
        ("fns = [eval, exec]", DYNAMIC_EVAL),
        ("breakpoint()", DYNAMIC_EVAL),
        ("import pickle\npickle.loads(blob)", DYNAMIC_EVAL),
        ("from pickle import loads\nloads(blob)", DYNAMIC_EVAL),
        ("import marshal\nmarshal.loads(b)", DYNAMIC_EVAL),
        (
            "import yaml\nyaml.load(s, Loader=yaml.Loader)",
            DYNAMIC_EVAL,
        ),
        (
            "import numpy as np\nnp.load('a.npy', allow_pickle=True)",
            DYNAMIC_EVAL,
        ),
        (
            "import timeit\ntimeit.timeit('x=1', setup='import os')",
            DYNAMIC_EVAL,
        ),
        ("import runpy\nrunpy.run_path('x.py')", DYNAMIC_EVAL),
        ("import code\ncode.interact()", DYNAMIC_EVAL),
        ("types.FunctionType(c, {})", DYNAMIC_EVAL),
        ("import pandas as pd\npd.read_pickle('x.pkl')", DYNAMIC_EVAL),
    ]);
}

#[test]
fn fullwidth_identifiers_are_read_as_python_reads_them() {
    assert_dangerous(&[
        ("import os\nｏｓ.ｓｙｓｔｅｍ('id')", PROCESS_SPAWN),
        ("ｅｘｅｃ('print(1)')", DYNAMIC_EVAL),
        ("𝐞𝐯𝐚𝐥('1')", DYNAMIC_EVAL),
        ("import ｓｕｂｐｒｏｃｅｓｓ", PROCESS_SPAWN),
        ("import os\noſ.ſyſtem('id')", PROCESS_SPAWN),
        ("ｇｅｔａｔｔｒ(o, n)", PROCESS_SPAWN),
        ("ｏｐｅｎ('x', 'w')", FILE_WRITE),
        ("import shutil\nshutil.ｒｍｔｒｅｅ('d')", TREE_DELETION),
    ]);
}

#[test]
fn text_the_gate_cannot_read_as_python_does_is_dangerous() {
    assert_dangerous(&[
        ("x = 'never ends", DYNAMIC_EVAL),
        ("x = '''never ends", DYNAMIC_EVAL),
        ("x = f'{never ends'", DYNAMIC_EVAL),
        ("p = '/etc/pa\\N{LATIN SMALL LETTER S}swd'", DYNAMIC_EVAL),
        ("# -*- coding: utf-7 -*-\nprint(1)", DYNAMIC_EVAL),
    ]);
}

#[test]
fn archive_download_and_computed_mode_writes_are_file_writes() {
    assert_dangerous(&[
        (
            "import zipfile\nzipfile.ZipFile('a.zip').extractall('out')",
            FILE_WRITE,
        ),
        (
            "import tarfile\ntarfile.open('a.tgz').extract(m)",
            FILE_WRITE,
        ),
        (
            "import urllib.request\nurllib.request.urlretrieve(url, 'x.bin')",
            FILE_WRITE,
        ),
        ("import zipfile\nzipfile.ZipFile('a.zip', 'w')", FILE_WRITE),
        ("zipfile.ZipFile('a.zip', mode='a')", FILE_WRITE),
        ("zipfile.ZipFile('a.zip', 'x')", FILE_WRITE),
        ("import tarfile\ntarfile.open('a.tar', 'w')", FILE_WRITE),
        ("tarfile.open('a.tgz', mode='w:gz')", FILE_WRITE),
        ("f = open\nf('x', 'w')", FILE_WRITE),
        ("open('p', mode='w')", FILE_WRITE),
        ("open('p', 'w'.upper())", FILE_WRITE),
        ("open('p', m)", FILE_WRITE),
        ("open('p', *rest)", FILE_WRITE),
        ("open('p', f'w')", FILE_WRITE),
        ("import io\nio.open('p', 'w')", FILE_WRITE),
        ("import codecs\ncodecs.open('p', 'w', 'utf-8')", FILE_WRITE),
        (
            "import os\nos.open('p', os.O_WRONLY | os.O_CREAT)",
            FILE_WRITE,
        ),
        ("from pathlib import Path\nPath('x').open('w')", FILE_WRITE),
        ("p = Path('x')\np.open(mode)", FILE_WRITE),
        ("print('hi', file=open('log.txt', 'a'))", FILE_WRITE),
        (
            "import json\nwith open('o.json', 'w') as fh:\n    json.dump(obj, fh)",
            FILE_WRITE,
        ),
        ("import gzip\ngzip.open('x.gz', 'wb')", FILE_WRITE),
        ("os.fdopen(fd, 'w')", FILE_WRITE),
        ("from io import open as o", FILE_WRITE),
        ("paths = map(open, names)", FILE_WRITE),
        ("df.to_csv('out.csv')", FILE_WRITE),
        ("img.save('out.png')", FILE_WRITE),
        ("Path('a').rename('b')", FILE_WRITE),
        ("Path('a').replace('b')", FILE_WRITE),
        ("shutil.copy('a', 'b')", FILE_WRITE),
        ("pl_df.write_parquet('x.parquet')", FILE_WRITE),
        (
            "import logging\nlogging.basicConfig(filename='x.log')",
            FILE_WRITE,
        ),
        ("h = logging.FileHandler('x.log')", FILE_WRITE),
        ("import joblib\njoblib.dump(model, 'model.pkl')", FILE_WRITE),
        ("pd.ExcelWriter('out.xlsx')", FILE_WRITE),
    ]);
}

#[test]
fn sessions_clients_and_request_bodies_are_sending_data_out() {
    assert_dangerous(&[
        (
            "import requests\nrequests.Session().post(url, data=d)",
            DATA_UPLOAD,
        ),
        (
            "import requests\ns = requests.Session()\ns.post(url, data=d)",
            DATA_UPLOAD,
        ),
        (
            "import requests\nwith requests.Session() as s:\n    s.put(url)",
            DATA_UPLOAD,
        ),
        ("import requests as rq\nrq.patch(url)", DATA_UPLOAD),
        ("from requests import post\npost(url)", DATA_UPLOAD),
        (
            "from urllib.request import urlopen\nurlopen(url, data)",
            DATA_UPLOAD,
        ),
        (
            "import urllib.request\nurllib.request.Request(url, data, headers)",
            DATA_UPLOAD,
        ),
        ("urllib.request.Request(url, method='POST')", DATA_UPLOAD),
        (
            "import http.client\nc = http.client.HTTPConnection('h')\nc.request('POST', '/', body)",
            DATA_UPLOAD,
        ),
        (
            "http.client.HTTPSConnection('h').request(m, '/')",
            DATA_UPLOAD,
        ),
        ("import httpx\nhttpx.Client().post(url)", DATA_UPLOAD),
        (
            "import aiohttp\naiohttp.ClientSession().post(url)",
            DATA_UPLOAD,
        ),
        (
            "async with aiohttp.ClientSession() as session:\n    await session.delete(u)",
            DATA_UPLOAD,
        ),
        ("requests.request('PUT', url)", DATA_UPLOAD),
        ("requests.get(url, data=payload)", DATA_UPLOAD),
        ("requests.get('https://x/?q=' + secret)", DATA_UPLOAD),
        ("urlopen(f'https://x/?k={k}')", DATA_UPLOAD),
        ("s3.upload_file('a', 'b', 'c')", DATA_UPLOAD),
        ("import websockets", DATA_UPLOAD),
    ]);
}

#[test]
fn secret_paths_built_in_pieces_are_secret_reads() {
    assert_dangerous(&[
        (
            "import os\nos.path.join(os.path.expanduser('~'), '.ssh', 'id_rsa')",
            SECRET_READ,
        ),
        (
            "from pathlib import Path\nPath.home() / '.ssh' / 'id_rsa'",
            SECRET_READ,
        ),
        (
            "open(os.path.expanduser('~/.s' + 'sh/id_rsa')).read()",
            SECRET_READ,
        ),
        ("open('/etc/' + 'passwd').read()", SECRET_READ),
        ("open('/etc/' 'shadow')", SECRET_READ),
        ("open(f'/etc/{\"pass\"}wd')", SECRET_READ),
        ("d = '/etc'\nopen(os.path.join(d, 'passwd'))", SECRET_READ),
        ("p = '/etc/pa\\x73swd'", SECRET_READ),
        ("p = 'dwssap/cte/'[::-1]", SECRET_READ),
        (
            "import base64\nbase64.b64decode('L2V0Yy9wYXNzd2Q=')",
            SECRET_READ,
        ),
        (
            "''.join(map(chr, [47, 101, 116, 99, 47, 112, 97, 115, 115, 119, 100]))",
            SECRET_READ,
        ),
        ("open('/proc/self/environ').read()", SECRET_READ),
        (
            "import codecs\nopen(codecs.decode('/rgp/cnffjq', 'rot13'))",
            SECRET_READ,
        ),
        ("Path.home().joinpath('.aws', 'credentials')", SECRET_READ),
        ("open('config/.env')", SECRET_READ),
        ("print(os.environ)", SECRET_READ),
        ("import json\njson.dumps(dict(os.environ))", SECRET_READ),
        (
            "for k, v in os.environ.items():\n    print(k, v)",
            SECRET_READ,
        ),
        ("os.environ['DISCORD_TOKEN']", SECRET_READ),
        ("os.getenv('OPENAI_API_KEY')", SECRET_READ),
        ("os.environ.get(name)", SECRET_READ),
        ("from os import environ\nprint(environ)", SECRET_READ),
    ]);
}

#[test]
fn ordinary_analysis_code_is_never_called_dangerous() {
    for src in [
        "import pandas as pd\ndf = pd.read_csv('data.csv')\nprint(df.describe())",
        "print(sum(range(10)))",
        "import json\njson.loads(s)",
        "import requests\nrequests.get('https://example.com')",
        "open('notes.txt').read()",
        "with open('a.txt') as f:\n    print(f.read())",
        "import re\nre.compile(r'x')",
        "import math\nprint(math.pi)",
        "cursor.execute(sql)",
        "from datetime import datetime\nprint(datetime.now())",
        "import numpy as np\nprint(np.mean([1, 2, 3]))",
        "model.eval()",
        "df = df.rename(columns={'a': 'b'})",
        "df['n'] = df['s'].str.extract(r'(\\d+)')",
        "s = 'a,b'.replace(',', ';')",
        "import os\nprint(os.path.join('data', 'x.csv'))",
        "import os\nprint(os.environ.get('HOME'))",
        "if 'CI' in os.environ:\n    print('ci')",
        "import os\nprint(os.listdir('.'))",
        "import ast\nast.literal_eval('[1, 2]')",
        "import yaml\nyaml.safe_load(s)",
        "import yaml\nyaml.load(s, Loader=yaml.SafeLoader)",
        "from collections import Counter\nprint(Counter('hello').most_common(2))",
        "class A:\n    def __init__(self):\n        super().__init__()\n    def __repr__(self):\n        return type(self).__name__",
        "if __name__ == '__main__':\n    main()",
        "print(f'{x:>10} {y!r} {{literal}}')",
        "data = open('a.csv', 'r', encoding='utf-8').read()",
        "import zipfile\nzipfile.ZipFile('a.zip').namelist()",
        "from PIL import Image\nim = Image.open(path)\nprint(im.size)",
        "print(df.to_json(orient='records'))",
        "q.put(item)",
        "import matplotlib.pyplot as plt\nplt.plot([1, 2])",
        "données = [1, 2]\nprint(len(données))",
        "x = 1if y else 2",
        "import statistics\nstatistics.median([3, 1, 2])",
        "import os\nos.makedirs('out', exist_ok=True)",
        "from __future__ import annotations",
        "print(\"he said 'hi'\")  # exec this later? no",
    ] {
        assert_eq!(
            python::python_danger(src).map(|f| (f.label, f.detail)),
            None,
            "{src:?}"
        );
    }
}

/// Asserts no snippet is dangerous.
fn assert_ordinary(snippets: &[&str]) {
    for src in snippets {
        assert_eq!(
            python::python_danger(src).map(|f| (f.label, f.detail)),
            None,
            "{src:?}"
        );
    }
}

#[test]
fn a_spawn_capability_reached_through_another_modules_private_alias_is_dangerous() {
    assert_dangerous(&[
        (
            "import tempfile\ntempfile._os.system('rm -rf ~')",
            PROCESS_SPAWN,
        ),
        (
            "import tempfile\nlist(map(tempfile._os.system, ['id']))",
            PROCESS_SPAWN,
        ),
        (
            "import tempfile\ntempfile._os.popen('id').read()",
            PROCESS_SPAWN,
        ),
        (
            "import glob\nglob._os.execv('/bin/sh', ['sh'])",
            PROCESS_SPAWN,
        ),
        ("import tempfile\nrun(tempfile._os)", PROCESS_SPAWN),
        (
            "import tempfile\nm = tempfile._os\nm.unlink('x')",
            PROCESS_SPAWN,
        ),
        (
            "import shutil\nshutil.__os.spawnl(0, 'sh', 'sh')",
            PROCESS_SPAWN,
        ),
    ]);
}

#[test]
fn another_modules_private_alias_of_a_module_is_that_module() {
    assert_dangerous(&[
        ("import tempfile\ntempfile._os.remove('x')", FILE_WRITE),
        ("import tempfile\ntempfile._os.unlink('x')", FILE_WRITE),
        (
            "import tempfile\ntempfile._shutil.rmtree('d')",
            TREE_DELETION,
        ),
        ("import x\nx._pickle.loads(blob)", DYNAMIC_EVAL),
    ]);
}

#[test]
fn a_name_that_starts_a_process_is_a_spawn_through_any_module_path() {
    assert_dangerous(&[
        ("import platform\nplatform.popen('id')", PROCESS_SPAWN),
        ("helpers.__popen('id')", PROCESS_SPAWN),
        ("lib.Popen(['id'])", PROCESS_SPAWN),
        ("lib.popen2('id')", PROCESS_SPAWN),
        ("import os\nos._execvpe('sh', ['sh'], {})", PROCESS_SPAWN),
        ("lib.execlpe('sh', 'sh', {})", PROCESS_SPAWN),
        ("lib.fexecve(fd, ['sh'], {})", PROCESS_SPAWN),
        ("lib.spawnvpe(0, 'sh', ['sh'], {})", PROCESS_SPAWN),
        ("pexpect_like.spawn('sh')", PROCESS_SPAWN),
        ("lib.fork()", PROCESS_SPAWN),
        ("lib._fork_exec(args)", PROCESS_SPAWN),
        ("anyio.run_process(['id'])", PROCESS_SPAWN),
        ("tools.getstatusoutput('id')", PROCESS_SPAWN),
        ("tools.getoutput('id')", PROCESS_SPAWN),
        ("tools.check_output(['id'])", PROCESS_SPAWN),
        ("tools.check_call(['id'])", PROCESS_SPAWN),
        ("from helpers import check_call", PROCESS_SPAWN),
        ("runner = helpers.Popen", PROCESS_SPAWN),
        ("list(map(helpers.getoutput, cmds))", PROCESS_SPAWN),
    ]);
}

#[test]
fn system_called_with_an_argument_is_a_spawn_through_any_module() {
    assert_dangerous(&[
        ("lib.system('reboot')", PROCESS_SPAWN),
        ("lib._system('id')", PROCESS_SPAWN),
        ("a.b.c.system(cmd)", PROCESS_SPAWN),
        ("system(*argv)", PROCESS_SPAWN),
        ("lib.SYSTEM(command='id')", PROCESS_SPAWN),
    ]);
}

#[test]
fn a_called_name_holding_command_runs_a_command() {
    assert_dangerous(&[
        (
            "import uuid\nuuid._get_command_stdout('reboot')",
            PROCESS_SPAWN,
        ),
        ("utils.run_command('rm -rf ~')", PROCESS_SPAWN),
        ("run_command('id')", PROCESS_SPAWN),
        ("client.exec_command('id')", PROCESS_SPAWN),
        ("h.executeCommand('id')", PROCESS_SPAWN),
        ("x = shell.command('id')", PROCESS_SPAWN),
    ]);
}

#[test]
fn a_tcl_interpreter_evaluating_is_eval_exec() {
    assert_dangerous(&[
        (
            "import tkinter\ntkinter.Tcl().eval('exec rm -rf ~')",
            DYNAMIC_EVAL,
        ),
        (
            "import tkinter as tk\nroot = tk.Tk()\nroot.tk.eval('exec id')",
            DYNAMIC_EVAL,
        ),
        ("root.tk.call('exec', 'id')", DYNAMIC_EVAL),
        (
            "from tkinter import Tcl\nt = Tcl()\nt.eval('exec id')",
            DYNAMIC_EVAL,
        ),
        (
            "import _tkinter\n_tkinter.create().eval('exec id')",
            DYNAMIC_EVAL,
        ),
        (
            "import tkinter\ntkinter.Tcl().evalfile('x.tcl')",
            DYNAMIC_EVAL,
        ),
        ("run = tkinter.Tcl().eval", DYNAMIC_EVAL),
    ]);
}

#[test]
fn everyday_names_that_look_like_capabilities_stay_ordinary() {
    assert_ordinary(&[
        "import platform\nprint(platform.system())",
        "import platform\nif platform.system() == 'Linux':\n    print('ok')",
        "import platform\nprint(platform.uname().system)",
        "system = 'linux'\nprint(system)",
        "print(config.system)",
        "import re\nre.compile(r'x')",
        "print('{} {}'.format(a, b))",
        "d = {'a': 1}\nd.popitem()",
        "import json\njson.loads(s)",
        "import math\nprint(math.sqrt(2))",
        "print(sorted([3, 1, 2]))",
        "from datetime import datetime\nprint(datetime.now().isoformat())",
        "from collections import defaultdict\nd = defaultdict(list)",
        "from pathlib import Path\nprint(Path('data/x.csv').read_text())",
        "import time\nprint(time.time())",
        "cursor.execute(sql)\ncursor.executemany(sql, rows)",
        "model.eval()",
        "app.exec()",
        "if repo.fork:\n    print(repo.name)",
        "print(args.command)",
        "parser.add_argument('command')",
        "sub = parser.add_subparsers(dest='command')",
        "@click.command()\ndef main():\n    pass",
        "@bot.command(name='ping')\nasync def ping(ctx):\n    pass",
        "def run_command(x):\n    return x",
        "spawned = 0\nspawned += 1",
        "import multiprocessing as mp\nmp.set_start_method('spawn')",
        "from concurrent.futures import ThreadPoolExecutor\nwith ThreadPoolExecutor() as ex:\n    ex.submit(f)",
        "self._profile.run(x)",
        "print(self._os)",
    ]);
}

#[test]
fn a_secret_path_is_found_after_format_placeholders_and_path_normalisation() {
    assert_dangerous(&[
        (
            "open('%s/.ssh/id_rsa' % os.path.expanduser('~')).read()",
            SECRET_READ,
        ),
        ("open('{}/.ssh/id_rsa'.format(home))", SECRET_READ),
        ("open(f'{home}/.ssh/id_rsa')", SECRET_READ),
        ("open('/root/./.ssh/./id_rsa')", SECRET_READ),
        (
            "Path('/home/u/.//.ssh/id_ed25519').read_text()",
            SECRET_READ,
        ),
        ("open('/etc/./passwd').read()", SECRET_READ),
        ("open('/etc//./shadow')", SECRET_READ),
        ("open('/etc/x/../passwd')", SECRET_READ),
        ("open('/etc/%s' % 'passwd')", SECRET_READ),
        ("open('/etc/{}'.format('shadow'))", SECRET_READ),
        ("open('%sid_rsa' % ssh_dir)", SECRET_READ),
        ("open('{home}id_ed25519'.format(home=d))", SECRET_READ),
        ("open('{}/.aws/./credentials'.format(h))", SECRET_READ),
        ("open('%(home)s/.docker/./config.json' % env)", SECRET_READ),
        ("open(f'{h}/.kube/./config')", SECRET_READ),
        ("open('/proc/self/./environ')", SECRET_READ),
    ]);
}

#[test]
fn format_templates_and_dotted_paths_without_secrets_stay_ordinary() {
    assert_ordinary(&[
        "print(open('%s/%s.csv' % (d, n)).read())",
        "print(open('{}/report.txt'.format(out)).read())",
        "print(open(f'{d}/./data.csv').read())",
        "print(open('../data/./x.csv').read())",
        "print(open('/etc/./hosts').read())",
        "print('%d%% done, %-10.2f left' % (pct, rest))",
        "print('{:.2f} {name!r:>10}'.format(x, name=n))",
        "print(open('/home/u/./projects/../notes.txt').read())",
        "print('%s.%s' % (module, name))",
    ]);
}

#[test]
fn one_hundred_kilobytes_of_code_are_read_quickly() {
    let chunk = "import pandas as pd\ndf = pd.read_csv(f'data_{i}.csv')\nprint(df.a.sum() + 1)\n";
    let big = chunk.repeat(100_000 / chunk.len() + 1);
    let start = Instant::now();
    assert_eq!(is_dangerous_python(&big), None);
    let chain = format!("x{}", ".a".repeat(50_000));
    assert_eq!(is_dangerous_python(&chain), None);
    let nested = format!("{}1{}", "open(".repeat(20_000), ")".repeat(20_000));
    let _ = is_dangerous_python(&nested);
    let fstrings = "f'{".repeat(20_000);
    assert!(is_dangerous_python(&fstrings).is_some());
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

/// Pieces the generated snippets are made of.
const PIECES: [&str; 28] = [
    "os", "system", "(", ")", "[", "]", "{", "}", ".", ",", "=", "+", "'", "\"", "f'", "'''", "\\",
    "#", "\n", " ", "open", "'w'", "exec", "getattr", "__", "ｏｓ", ":", "!",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn python_danger_never_panics_on_any_text(text in any::<String>()) {
        let _ = python::python_danger(&text);
    }

    #[test]
    fn python_danger_never_panics_on_snippets_mixing_tokens(
        picks in prop::collection::vec(0..PIECES.len(), 0..60)
    ) {
        let text: String = picks.iter().filter_map(|k| PIECES.get(*k)).copied().collect();
        let _ = python::python_danger(&text);
    }

    #[test]
    fn a_dangerous_call_after_ordinary_code_stays_dangerous(
        prefix in "(x = [0-9]{1,3}|print\\('[a-z ]{0,8}'\\)|import math)",
        which in 0..4usize,
    ) {
        let (danger, label) = [
            ("os.system('id')", PROCESS_SPAWN),
            ("exec(s)", DYNAMIC_EVAL),
            ("open('x', 'w')", FILE_WRITE),
            ("requests.post(u)", DATA_UPLOAD),
        ][which];
        let src = format!("{prefix}\n{danger}");
        let found = is_dangerous_python(&src);
        prop_assert_eq!(found.as_deref(), Some(label), "{:?}", src);
    }
}
