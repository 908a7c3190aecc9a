from zoo._cli import main

main()
