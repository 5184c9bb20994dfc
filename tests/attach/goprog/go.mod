module goprog

go 1.21
