// expect-error: 1:1: main
// a file with nothing but comments: the missing main package is reported at the start of the file
