from zoo import hookimpl


@hookimpl
def register_models(register):
    raise RuntimeError("the plugin's data file is missing")
