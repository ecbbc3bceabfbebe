"""``python -m mxcy.alias {install,uninstall,status} [--target DIR]``: the ``import mxnet``
opt-in (see ``mxcy.alias``). Exit status 0 on success, 1 when refused (message on stderr)."""
import argparse
import sys

from mxcy.alias import AliasError, install, status, uninstall


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python -m mxcy.alias',
        description="Opt in to `import mxnet` resolving to mxcy in this environment.")
    parser.add_argument('command', choices=['install', 'uninstall', 'status'])
    parser.add_argument('--target', metavar='DIR', default=None,
                        help="directory to write mxnet/ into (default: this interpreter's "
                             "site-packages)")
    args = parser.parse_args(argv)
    try:
        if args.command == 'install':
            pkg_dir = install(args.target)
            print(f"installed the mxnet alias of mxcy: {pkg_dir}")
            print("`import mxnet` now imports mxcy; undo with: python -m mxcy.alias uninstall"
                  + (f" --target {args.target}" if args.target else ""))
        elif args.command == 'uninstall':
            removed = uninstall(args.target)
            if removed:
                print("removed the mxnet alias of mxcy:")
                for path in removed:
                    print(f"  {path}")
            else:
                print(f"no mxnet alias in {status(args.target)['target']}; nothing removed")
        else:
            info = status(args.target)
            print(f"mxnet alias: {info['state']}")
            print(f"  {info['detail']}")
    except AliasError as err:
        print(f"mxcy.alias {args.command}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
