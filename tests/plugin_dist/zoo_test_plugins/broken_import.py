import zoo_test_plugins_this_module_does_not_exist  # noqa: F401
