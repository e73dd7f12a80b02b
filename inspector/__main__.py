from inspector.cli import main

if __name__ == "__main__":  # guarded: worker processes import the main module too
    raise SystemExit(main())
